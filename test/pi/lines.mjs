// Line framing for the JSONL streams the test drivers read: Pi's RPC stdout
// (pi-rpc.mjs), the oracle's stdin (oracle.mjs) and its stdout (oracle-smoke.mjs).

/**
 * Call onLine(line) for each LF-terminated line of stream's text, a trailing
 * CR removed and blank lines skipped; at the end of the stream for an
 * unterminated last line too, then onEnd(). The stream is decoded as UTF-8
 * (setEncoding, so a character split between two chunks stays whole).
 */
export function onLines(stream, onLine, onEnd = () => {}) {
  let buf = "";
  const emit = (line) => {
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() !== "") onLine(line);
  };
  stream.setEncoding("utf8");
  stream.on("data", (data) => {
    buf += data;
    let nl;
    while ((nl = buf.indexOf("\n")) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      emit(line);
    }
  });
  stream.on("end", () => {
    const tail = buf;
    buf = "";
    emit(tail);
    onEnd();
  });
}
