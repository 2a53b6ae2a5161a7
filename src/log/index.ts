export { createLogger, recordingLogger, type Logger, type LogFields, type RecordingLogger } from "./logger.js";
export { LOG } from "./messages.js";
