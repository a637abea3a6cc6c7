// Long jobs (compaction, branch summaries, previews) in a progress notification with a Cancel
// button. The server reports through $/progress on a token it creates; the first `begin` that
// arrives while a job waits for its token is taken as that job's, so its percentages and
// messages land in the job's notification instead of languageclient's status bar item.

import * as vscode from "vscode";
import { ProgressToken, WorkDoneProgressBegin, WorkDoneProgressCancelNotification, WorkDoneProgressEnd, WorkDoneProgressReport } from "vscode-languageclient/node";
import type { PiClient } from "./client";
import type { PiContext } from "./context";
import { describeError } from "./models/errors";
import { forceAfterOwnedByPi, showMessage } from "./notifications";
import { testLog } from "./testLog";

interface JobSink {
  progress: vscode.Progress<{ message?: string; increment?: number }>;
  token?: ProgressToken;
  reported: number;
}

type WorkDoneParams = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export class Jobs {
  private readonly sinks: JobSink[] = [];
  private readonly sinkByToken = new Map<ProgressToken, JobSink>();

  /** Runs one request of `server` in a progress notification; Cancel cancels the request and its progress token. */
  runOnce<T>(server: Pick<PiClient, "client" | "custom" | "execute">, title: string, command: string, params: object, asRequest = false): Thenable<Outcome<T>> {
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Pi: ${title}`, cancellable: true },
      async (progress, token) => {
        const sink: JobSink = { progress, reported: 0 };
        this.sinks.push(sink);
        testLog("jobStart", { command, title });
        const sub = token.onCancellationRequested(() => {
          testLog("jobCancel", { command });
          // The request is cancelled by sendRequest ($/cancelRequest); the progress token too.
          const client = server.client;
          if (sink.token !== undefined && client) {
            void client.sendNotification(WorkDoneProgressCancelNotification.type, { token: sink.token });
          }
        });
        try {
          const result = asRequest ? await server.custom<T>(command, params, token) : await server.execute<T>(command, params, token);
          testLog("jobDone", { command, result: result as unknown });
          return { ok: true as const, value: result };
        } catch (err) {
          testLog("jobError", { command, error: { code: (err as { code?: unknown }).code, message: String((err as Error).message ?? err), data: (err as { data?: unknown }).data } });
          return { ok: false as const, error: err };
        } finally {
          sub.dispose();
          const i = this.sinks.indexOf(sink);
          if (i >= 0) this.sinks.splice(i, 1);
          if (sink.token !== undefined) this.sinkByToken.delete(sink.token);
        }
      },
    );
  }

  handleWorkDoneProgress(token: ProgressToken, params: WorkDoneParams, next: (token: ProgressToken, params: WorkDoneParams) => void): void {
    let sink = this.sinkByToken.get(token);
    if (!sink && params.kind === "begin") {
      sink = this.sinks.find((s) => s.token === undefined);
      if (sink) {
        sink.token = token;
        this.sinkByToken.set(token, sink);
      }
    }
    testLog("progress", {
      token,
      kind: params.kind,
      title: params.kind === "begin" ? params.title : undefined,
      message: params.message,
      percentage: params.kind !== "end" ? params.percentage : undefined,
      notification: sink !== undefined,
    });
    if (!sink) {
      next(token, params); // not ours: languageclient shows it in the status bar
      return;
    }
    if (params.kind === "end") {
      this.sinkByToken.delete(token);
      next(token, params); // lets languageclient dispose its (never shown) progress part
      return;
    }
    const pct = params.percentage;
    let increment: number | undefined;
    if (typeof pct === "number") {
      const clamped = Math.max(0, Math.min(100, pct));
      increment = Math.max(0, clamped - sink.reported);
      sink.reported += increment;
    }
    const message = params.message ?? (params.kind === "begin" ? params.title : undefined);
    sink.progress.report({ message, increment });
  }
}

/**
 * Run a long command in a progress notification with a Cancel button. `command` is a server
 * command (workspace/executeCommand), or with `asRequest` the custom request of that name.
 */
export async function runJob<T>(pi: PiContext, title: string, what: string, command: string, params: object, asRequest = false): Promise<T | undefined> {
  const r = await pi.jobs.runOnce<T>(pi.server, title, command, params, asRequest);
  if (r.ok) return r.value;
  if (await forceAfterOwnedByPi(what, r.error, params)) return runJob<T>(pi, title, what, command, { ...params, force: true }, asRequest);
  void showMessage(pi, describeError(what, r.error));
  return undefined;
}
