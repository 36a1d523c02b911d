export { type Logger, LOGGER, nullLogger } from './logger.js';
export { type Clock, CLOCK, systemClock, type TimerHandle } from './clock.js';
export { COMMAND_EXECUTOR, type CommandExecutor, type CommandOptions, type CommandResult } from './command-executor.js';
export { type Sysctl, SYSCTL } from './sysctl.js';
export { HOST_FS, type HostFs } from './host-fs.js';
export { ExecaCommandExecutor, spawnFdHeadroom } from './execa-executor.js';
export { ProcSysctl, sysctlPath } from './proc-sysctl.js';
export { NodeHostFs } from './node-host-fs.js';
export { createLogger, levelForVerbosity, type LoggerOptions, type LogLevel } from './winston-logger.js';
