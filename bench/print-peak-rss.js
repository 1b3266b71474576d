// Preloaded into the measured process (node -r): its peak resident set size, printed on exit.
process.on('exit', () => {
  process.stderr.write(`peak RSS: ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB\n`);
});
