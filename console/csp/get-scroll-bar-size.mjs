// @rc-component/util's scrollbar measure without its injected <style>: the original clones a
// target's `::-webkit-scrollbar` width into a <style> element for its measuring box, which the
// console's CSP (style-src 'self') refuses and reports on every table. This one reads that width
// directly when the target sets one (the original's own fallback when it cannot inject), and
// otherwise measures a box styled through the CSSOM only, which the CSP allows. Same exports; put in
// place of the original by vite.config.mjs.
let cached;

function measureScrollbarSize(ele) {
  if (ele) {
    const webkit = getComputedStyle(ele, '::-webkit-scrollbar');
    const width = parseInt(webkit.width, 10);
    const height = parseInt(webkit.height, 10);
    if (width && height && !Number.isNaN(width) && !Number.isNaN(height)) return { width, height };
  }
  const measure = document.createElement('div');
  const style = measure.style;
  style.position = 'absolute';
  style.left = '0';
  style.top = '0';
  style.width = '100px';
  style.height = '100px';
  style.overflow = 'scroll';
  if (ele) {
    const target = getComputedStyle(ele);
    style.scrollbarColor = target.scrollbarColor;
    style.scrollbarWidth = target.scrollbarWidth;
  }
  document.body.appendChild(measure);
  const size = {
    width: measure.offsetWidth - measure.clientWidth,
    height: measure.offsetHeight - measure.clientHeight,
  };
  document.body.removeChild(measure);
  return size;
}

export default function getScrollBarSize(fresh) {
  if (typeof document === 'undefined') return 0;
  if (fresh || cached === undefined) cached = measureScrollbarSize();
  return cached.width;
}

export function getTargetScrollBarSize(target) {
  if (typeof document === 'undefined' || !target || !(target instanceof Element)) return { width: 0, height: 0 };
  return measureScrollbarSize(target);
}
