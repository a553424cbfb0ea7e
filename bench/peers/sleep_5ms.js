// bench/workers' I/O-bound action for the OpenWhisk Node.js runtime: the same 5 ms wait as
// bench/sleep_5ms.cpp, in a Promise (the runtime serves overlapping activations with
// __OW_ALLOW_CONCURRENT=true), and the same answer.
function main(params) {
    const name = params.name || 'stranger';
    return new Promise((resolve) => setTimeout(() => resolve({ greeting: `Hello, ${name}!` }), 5));
}
