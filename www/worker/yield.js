// Let the worker's queued messages (a Stop, a Cancel, new settings) run
// between engine calls. A message to a port of our own comes back as the
// next task at once; `setTimeout(0)` would do the same only for its first
// few rounds: nested timers are clamped to 4 ms, which cost a SmolLM2 Run
// about 4 ms of every token.

const channel = new MessageChannel();
/** @type {(() => void)[]} */
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();

/** @returns {Promise<void>} settles after the messages already queued have been handled */
export function yieldToMessages() {
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(null);
  });
}
