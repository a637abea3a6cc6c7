// What to tell the user when a pi-lsp request fails. Pure: no vscode import.

export const ErrorCodes = {
  InvalidParams: -32602,
  MethodNotFound: -32601,
  RequestCancelled: -32800,
  ContentModified: -32801,
  RequestFailed: -32803,
  ConnectionInactive: -32097,
} as const;

export type Action = "openSettings" | "selectSession" | "showOutput" | "useExtractive" | "refresh";

export interface UserMessage {
  severity: "info" | "warning" | "error";
  text: string;
  actions: Action[];
}

interface RpcErrorLike {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

export function errorKind(err: unknown): string | undefined {
  const data = (err as RpcErrorLike | undefined)?.data;
  if (data && typeof data === "object" && typeof (data as { kind?: unknown }).kind === "string") {
    return (data as { kind: string }).kind;
  }
  return undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  const m = (err as RpcErrorLike | undefined)?.message;
  return typeof m === "string" && m ? m : String(err);
}

/** `what` is the operation in words, e.g. "Compaction" or "Navigation". */
export function describeError(what: string, err: unknown): UserMessage {
  const code = (err as RpcErrorLike | undefined)?.code;
  const kind = errorKind(err);
  const msg = messageOf(err);
  if (kind === "cancelled" || code === ErrorCodes.RequestCancelled) {
    return { severity: "info", text: `${what} cancelled: the session file was not changed.`, actions: [] };
  }
  if (kind === "sessionChanged" || code === ErrorCodes.ContentModified) {
    return {
      severity: "warning",
      text: `${what} stopped: the session file changed while it ran (Pi wrote to it), and nothing was written. Try again.`,
      actions: ["refresh"],
    };
  }
  switch (kind) {
    case "ownedByPi":
      return {
        severity: "warning",
        text: `${what} not done: a running pi process is writing this session (${msg}). Wait for Pi to finish, or write anyway.`,
        actions: [],
      };
    case "piBusy":
      return {
        severity: "warning",
        text: `${what} not done: the live pi is busy (${msg}). Try again when its agent is idle.`,
        actions: [],
      };
    case "piGone":
      return { severity: "error", text: `${what} failed: ${msg}.`, actions: ["refresh"] };
    case "bridgeFailed":
      return { severity: "error", text: `${what} failed in the live pi: ${msg}`, actions: ["showOutput"] };
    case "alreadyCompacted":
      return { severity: "info", text: `Nothing to do: ${msg}`, actions: [] };
    case "contextTooLong":
      return {
        severity: "error",
        text: `${what} failed: the text to summarize is too long for the summarizer's model (${msg}). Lower piLsp.compaction.keepRecentTokens or use a model with a larger window.`,
        actions: ["openSettings"],
      };
    case "pinnedDropped":
      return {
        severity: "warning",
        text: `${what} refused: the summary would drop a pinned message (${msg}). Unpin it, or edit the summary so it quotes the pinned message.`,
        actions: [],
      };
    case "badSession":
      return { severity: "error", text: `${what} failed: the session file cannot be used (${msg}).`, actions: ["showOutput"] };
    case "outsideSessions":
      return {
        severity: "error",
        text: `${what} failed: ${msg}. pi-lsp only writes session files under Pi's sessions folder ($PI_CODING_AGENT_DIR/sessions).`,
        actions: [],
      };
    case "nothingToCompact":
      return { severity: "info", text: `Nothing to compact: ${msg}`, actions: [] };
    case "noSession":
      return {
        severity: "warning",
        text: `${what} failed: no Pi session for this workspace (${msg}). Start Pi in this folder, or pick a session with "Pi: Select Session".`,
        actions: ["selectSession"],
      };
    case "summarizerFailed":
      return {
        severity: "error",
        text: `${what} failed: the summarizer did not answer (${msg}). Check the piLsp.summarizer settings (base URL, model, and the environment variable named by apiKeyEnv), or use the offline "extractive" summarizer.`,
        actions: ["openSettings", "useExtractive", "showOutput"],
      };
    case "notFound":
      return {
        severity: "warning",
        text: `${what} failed: ${msg}. The session may have changed; refresh the Pi Session view and try again.`,
        actions: [],
      };
    case "invalidParams":
      return { severity: "error", text: `${what} failed: ${msg}`, actions: ["showOutput"] };
  }
  if (code === ErrorCodes.ConnectionInactive) {
    return {
      severity: "error",
      text: `${what} failed: pi-lsp is not running. Run "Pi: Restart Server", or check "Pi: Show Server Output".`,
      actions: ["showOutput"],
    };
  }
  if (code === ErrorCodes.MethodNotFound) {
    return {
      severity: "error",
      text: `${what} failed: this pi-lsp does not support it (${msg}). Update pi-lsp or set piLsp.server.path to a newer binary.`,
      actions: ["openSettings"],
    };
  }
  return { severity: "error", text: `${what} failed: ${msg}`, actions: ["showOutput"] };
}

export interface ServerLocation {
  kind: "configured" | "bundled" | "path";
  command: string;
}

/** Message for a server binary that cannot be started. */
export function missingServerMessage(configured: string | undefined, reason: string): UserMessage {
  if (configured) {
    return {
      severity: "error",
      text: `pi-lsp could not be started from piLsp.server.path "${configured}": ${reason}. Fix the setting (an absolute path to the pi-lsp binary), or clear it to use the bundled binary or pi-lsp on PATH.`,
      actions: ["openSettings", "showOutput"],
    };
  }
  return {
    severity: "error",
    text: `pi-lsp was not found: ${reason}. Install it (in the pi-lsp repository: "make build", then put bin/pi-lsp on PATH) or set piLsp.server.path to the binary.`,
    actions: ["openSettings", "showOutput"],
  };
}
