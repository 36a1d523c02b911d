import type { DebugResponse, DebugRoute } from '../agent/index.js';
import type { DebugState } from './debug-state.js';
import { NoRulesYetError } from './debug-state.js';
import { UnknownServiceError } from './explain-report.js';
import { traceJson } from './trace-output.js';
import { TraceInputError } from './trace-packet.js';
import { checkServiceName } from './subcommand-args.js';

function error(status: number, err: unknown): DebugResponse {
  return { status, body: { error: (err as Error).message } };
}

/** Maps what went wrong to its status: bad input 400, unknown Service 404, no rules yet 503. */
function failure(err: unknown): DebugResponse {
  if (err instanceof TraceInputError) return error(400, err);
  if (err instanceof UnknownServiceError) return error(404, err);
  if (err instanceof NoRulesYetError) return error(503, err);
  return error(500, err);
}

async function answer(work: () => Promise<unknown>): Promise<DebugResponse> {
  try {
    return { status: 200, body: await work() };
  } catch (err) {
    return failure(err);
  }
}

/**
 * The metrics server's /debug/trace?from=…&to=…&protocol=… and /debug/explain?service=ns/name: the
 * same JSON as `kube-proxy trace -o json` / `explain -o json`, from the running proxy's own state.
 */
export function debugRoutes(state: DebugState): DebugRoute {
  return (path, query) => {
    if (path === '/debug/trace') {
      return answer(async () => {
        const a = await state.trace({
          from: query.get('from') ?? undefined,
          to: query.get('to') ?? undefined,
          protocol: query.get('protocol') ?? undefined,
          inInterface: query.get('inInterface') ?? undefined,
        });
        return traceJson(a.trace, a.origin);
      });
    }
    if (path === '/debug/explain') {
      return answer(async () => {
        const service = query.get('service');
        if (!service) throw new TraceInputError('service=NAMESPACE/NAME is required');
        return state.explain(checkServiceName(service));
      });
    }
    return undefined;
  };
}
