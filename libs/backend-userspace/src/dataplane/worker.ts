/*
 * Entry of the userspace data-plane worker thread (started by DataPlaneClient). It runs the proxy
 * sockets; the main thread keeps the API watches, syncs and capture rules.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DataPlaneHost } from './host.js';
import type { DataPlaneConfig, FromDataPlane, ToDataPlane } from './protocol.js';

if (parentPort === null) throw new Error('the userspace data plane must run as a worker thread');
const port = parentPort;
const host = new DataPlaneHost({ postMessage: (m: FromDataPlane) => port.postMessage(m) }, workerData as DataPlaneConfig);
port.on('message', (message: ToDataPlane) => host.handle(message));
port.on('close', () => host.closeAll());
