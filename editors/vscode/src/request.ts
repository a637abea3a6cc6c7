// The two ways a command asks the server for something, with errors turned into
// messages. They reach the client through the context (pi.server), so the commands import
// this module, never client.ts; the client's executeCommand middleware (the commands) is
// given to the client by extension.ts, so client.ts imports no command either.

import type { PiContext } from "./context";
import { describeError } from "./models/errors";
import { forceAfterOwnedByPi, showMessage } from "./notifications";
import { testLog } from "./testLog";

/**
 * A pi/* request (method) for a palette command: undefined, with the error shown as
 * "what: …", when there is no client or the request fails.
 */
export async function customRequest<T>(pi: PiContext, what: string, method: string, params: object = {}): Promise<T | undefined> {
  if (!pi.server.requireClient()) return undefined;
  try {
    return await pi.server.custom<T>(method, params);
  } catch (err) {
    void showMessage(pi, describeError(what, err));
    return undefined;
  }
}

/** A short command: errors become messages, the result (or undefined) is returned. */
export async function plain<T>(pi: PiContext, what: string, command: string, params: object): Promise<T | undefined> {
  try {
    const r = await pi.server.execute<T>(command, params);
    testLog("commandResult", { command, result: r as unknown });
    return r;
  } catch (err) {
    testLog("commandError", { command, message: String((err as Error).message ?? err), data: (err as { data?: unknown }).data });
    if (await forceAfterOwnedByPi(what, err, params)) return plain<T>(pi, what, command, { ...params, force: true });
    void showMessage(pi, describeError(what, err));
    return undefined;
  }
}
