// The run timeline of report.html, drawn with uPlot (bundled in the page before this script).
// Reads <script type="application/json" id="timeline-data"> (report.json's `timeline`): one
// chart per lane (a key, the token endpoint, requests without a key) that carried requests or
// tokens. Each chart: the lane's requests in its trailing window (a stepped line) against the
// declared ceiling (dashed), every request as a point coloured by its answer, the Retry-After
// waits the answers asked for (shaded), the suite's own waits (bars under the axis) and the
// tokens issued on the key (lines from issuance to expiry, at the top). Drag to zoom (every chart
// follows), double-click to zoom out. #timeline?from=<s>&to=<s>&key=<lane> zooms to a stretch and
// marks it: the timing checks link there. All text through textContent.
(function () {
  'use strict';
  var holder = document.getElementById('timeline-charts');
  var source = document.getElementById('timeline-data');
  if (!holder || !source || typeof uPlot === 'undefined') return;
  var tl = JSON.parse(source.textContent);
  if (!tl || !tl.lanes || !tl.requests) return;
  // The stored columns (src/report/timeline.ts) as rows [sent ms, duration ms, lane, status, exchange id].
  var requests = [];
  (function () {
    var q = tl.requests;
    var at = 0;
    for (var r = 0; r + 2 < q.answers.length; r += 3) {
      for (var k = 0; k < q.answers[r + 2] && requests.length < q.sent.length; k++) {
        var i = requests.length;
        at += q.sent[i];
        requests.push([at, q.ms[i], q.answers[r], q.answers[r + 1], q.exchanges[String(i)]]);
      }
    }
  })();

  var COLORS = {
    ok: '#1a7f37', c401: '#8250df', c429: '#cf222e', c4xx: '#bc4c00', c5xx: '#6e0f0f', none: '#6e7781',
    line: '#0969da', ceiling: '#cf222e', retry: 'rgba(207,34,46,0.13)', token: '#8250df',
    'w-retry-after': '#cf222e', 'w-pacing': '#0969da', 'w-backoff': '#9a6700', 'w-check': '#6e7781', mark: 'rgba(9,105,218,0.12)',
  };
  // Answer classes, in legend order: [key, label, test].
  var CLASSES = [
    ['ok', '2xx/3xx', function (s) { return s >= 200 && s < 400; }],
    ['c401', '401/403', function (s) { return s === 401 || s === 403; }],
    ['c429', '429', function (s) { return s === 429; }],
    ['c4xx', 'other 4xx', function (s) { return s >= 400 && s < 500 && s !== 401 && s !== 403 && s !== 429; }],
    ['c5xx', '5xx', function (s) { return s >= 500; }],
    ['none', 'no answer', function (s) { return !s; }],
  ];
  function classOf(status) {
    for (var i = 0; i < CLASSES.length; i++) if (CLASSES[i][2](status)) return i;
    return CLASSES.length - 1;
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function clock(sec) {
    var neg = sec < 0;
    sec = Math.abs(sec);
    var m = Math.floor(sec / 60);
    var s = sec - m * 60;
    var text = m + ':' + (s < 10 ? '0' : '') + (Math.round(s * 10) / 10).toFixed(s % 1 ? 1 : 0);
    return (neg ? '-' : '') + text;
  }

  var endMs = 0;
  requests.forEach(function (r) { endMs = Math.max(endMs, r[0] + r[1]); });
  tl.retryAfter.forEach(function (r) { endMs = Math.max(endMs, r[0] + r[2]); });
  tl.waits.forEach(function (w) { endMs = Math.max(endMs, w[0] + w[2]); });
  var full = { min: 0, max: Math.max(1, endMs / 1000) };

  // What each lane carries.
  var lanes = tl.lanes.map(function (lane, i) {
    return { i: i, lane: lane, requests: [], retry: [], waits: [], tokens: [] };
  });
  requests.forEach(function (r) { if (lanes[r[2]]) lanes[r[2]].requests.push(r); });
  tl.retryAfter.forEach(function (r) { if (lanes[r[1]]) lanes[r[1]].retry.push(r); });
  // A wait of no key (most often a check's own) shows on the chart of the requests without a key.
  var noKey = lanes.filter(function (l) { return l.lane.kind === 'none'; })[0];
  tl.waits.forEach(function (w) {
    var l = lanes[w[1]] || noKey;
    if (l) l.waits.push(w);
  });
  tl.tokens.forEach(function (t) { if (lanes[t[1]]) lanes[t[1]].tokens.push(t); });
  // A lane without a declared window (requests without a key) counts over the keys' window.
  var runWindowSec = tl.lanes.reduce(function (w, l) { return w || l.windowSec; }, 0) || 60;
  var shown = lanes.filter(function (l) { return l.requests.length || l.tokens.length || (l === noKey && l.waits.length); });

  // A lane's data: x = every send and every moment a request leaves the window; y = requests in the trailing window.
  function laneData(l) {
    var windowMs = (l.lane.windowSec || runWindowSec) * 1000;
    var sends = l.requests.map(function (r) { return r[0]; }).sort(function (a, b) { return a - b; });
    var events = [];
    sends.forEach(function (t) { events.push([t, 1]); events.push([t + windowMs, -1]); });
    events.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var xs = [];
    var count = [];
    var n = 0;
    events.forEach(function (e) {
      n += e[1];
      if (xs.length && xs[xs.length - 1] === e[0] / 1000) count[count.length - 1] = n;
      else { xs.push(e[0] / 1000); count.push(n); }
    });
    var series = CLASSES.map(function () { return xs.map(function () { return null; }); });
    var at = new Map();
    xs.forEach(function (x, i) { at.set(x, i); });
    var byIndex = {};
    l.requests.forEach(function (r) {
      var i = at.get(r[0] / 1000);
      if (i === undefined) return;
      series[classOf(r[3])][i] = count[i];
      (byIndex[i] = byIndex[i] || []).push(r);
    });
    var peak = count.reduce(function (m, v) { return Math.max(m, v); }, 0);
    return { data: [xs, count].concat(series), peak: peak, byIndex: byIndex };
  }

  // Token lifetimes, stacked in rows so overlapping ones stay apart.
  function tokenRows(tokens) {
    var ends = [];
    return tokens.map(function (t) {
      var row = 0;
      while (row < ends.length && ends[row] > t[0]) row++;
      if (row >= 6) row = 5;
      ends[row] = Math.max(ends[row] || 0, t[2]);
      return { t: t, row: row };
    });
  }

  function maxRow(rows) {
    return rows.reduce(function (m, r) { return Math.max(m, r.row); }, 0);
  }

  var charts = [];
  var mark = null;
  var syncing = false;
  var readout = document.getElementById('timeline-readout');

  function drawExtras(u, l, rows, ceiling) {
    var ctx = u.ctx;
    var top = u.bbox.top;
    var height = u.bbox.height;
    var left = u.bbox.left;
    var width = u.bbox.width;
    var px = function (sec) { return u.valToPos(sec, 'x', true); };
    var dpr = uPlot.pxRatio;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    if (mark && (mark.lanes === null || mark.lanes.indexOf(l.i) !== -1 || mark.lanes.length === 0)) {
      ctx.fillStyle = COLORS.mark;
      ctx.fillRect(px(mark.from), top, Math.max(2 * dpr, px(mark.to) - px(mark.from)), height);
    }
    // Retry-After asked by an answer: from the answer for as long as it asked.
    ctx.fillStyle = COLORS.retry;
    l.retry.forEach(function (r) {
      var x0 = px(r[0] / 1000);
      ctx.fillRect(x0, top, Math.max(dpr, px((r[0] + r[2]) / 1000) - x0), height);
    });
    // The declared ceiling.
    if (ceiling !== undefined) {
      var y = u.valToPos(ceiling, 'y', true);
      ctx.strokeStyle = COLORS.ceiling;
      ctx.lineWidth = 1.5 * dpr;
      ctx.setLineDash([6 * dpr, 4 * dpr]);
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + width, y);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.restore();
    // Tokens, above the plot: issuance tick, lifetime line, expiry tick.
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, 0, width, top);
    ctx.clip();
    ctx.strokeStyle = COLORS.token;
    ctx.lineWidth = 1.5 * dpr;
    rows.forEach(function (r) {
      var yy = (4 + r.row * 5) * dpr;
      var x0 = px(r.t[0] / 1000);
      var x1 = px(r.t[2] / 1000);
      ctx.beginPath();
      ctx.moveTo(x0, yy - 3 * dpr); ctx.lineTo(x0, yy + 3 * dpr);
      ctx.moveTo(x0, yy); ctx.lineTo(x1, yy);
      ctx.moveTo(x1, yy - 3 * dpr); ctx.lineTo(x1, yy + 3 * dpr);
      ctx.stroke();
    });
    ctx.restore();
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    // The suite's waits: bars along the bottom.
    l.waits.forEach(function (w) {
      ctx.fillStyle = COLORS['w-' + w[3]] || COLORS['w-check'];
      var x0 = px(w[0] / 1000);
      ctx.fillRect(x0, top + height - 5 * dpr, Math.max(dpr, px((w[0] + w[2]) / 1000) - x0), 4 * dpr);
    });
    ctx.restore();
  }

  function describeAt(l, d, idx) {
    if (idx === null || idx === undefined) return '';
    var x = d.data[0][idx];
    var parts = [l.lane.name + ' at ' + clock(x) + ': ' + d.data[1][idx] + ' in the window' + (l.lane.ceiling !== undefined ? ' (ceiling ' + l.lane.ceiling + ')' : '')];
    (d.byIndex[idx] || []).forEach(function (r) { parts.push((r[4] ? r[4] + ' ' : '') + '→ ' + (r[3] || 'no answer') + ' in ' + r[1] + ' ms'); });
    return parts.join(' · ');
  }

  function makeChart(l) {
    var d = laneData(l);
    var rows = tokenRows(l.tokens);
    var ceiling = l.lane.ceiling;
    var onScale = ceiling !== undefined && ceiling <= Math.max(3 * d.peak, 10);
    var box = el('div', 'tl-lane');
    box.setAttribute('data-lane', l.lane.name);
    box.setAttribute('data-requests', String(l.requests.length));
    box.setAttribute('data-tokens', String(l.tokens.length));
    var title = el('div', 'tl-title');
    var what = l.lane.kind === 'token-endpoint' ? 'token requests of the source address' : l.lane.kind === 'none' ? 'requests without a key' : 'requests with the key of ' + l.lane.name;
    title.appendChild(el('b', null, l.lane.name));
    title.appendChild(el('span', 'muted', ' ' + what + ': ' + l.requests.length + ' requests' +
      (l.tokens.length ? ', ' + l.tokens.length + ' tokens issued' : '') +
      (l.retry.length ? ', ' + l.retry.length + ' Retry-After' : '') +
      (ceiling !== undefined ? ' · ceiling ' + ceiling + ' per ' + l.lane.windowSec + ' s' + (onScale ? '' : ' (off the scale)') : '')));
    box.appendChild(title);
    var plot = el('div', 'tl-plot');
    box.appendChild(plot);
    holder.appendChild(box);
    var yMax = Math.max(d.peak, onScale ? ceiling : 0, 1) * 1.15 + 2;
    var opts = {
      width: Math.max(300, holder.clientWidth - 2),
      height: 150,
      legend: { show: false },
      padding: [rows.length ? 8 + (maxRow(rows) + 1) * 5 : 8, 12, 0, 0],
      cursor: { sync: { key: 'timeline' }, drag: { x: true, y: false }, points: { show: false } },
      scales: { x: { time: false, range: function (u, min, max) { return [min, max]; } }, y: { range: [0, yMax] } },
      axes: [
        { values: function (u, splits) { return splits.map(clock); }, incrs: [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600], size: 30, gap: 4 },
        { size: 44, gap: 4, label: 'in window', labelSize: 14, labelFont: '11px sans-serif', font: '11px sans-serif' },
      ],
      series: [{}, { label: 'requests in the window', stroke: COLORS.line, width: 1.5, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } }].concat(
        CLASSES.map(function (c) {
          return { label: c[1], stroke: COLORS[c[0]], fill: COLORS[c[0]], paths: function () { return null; }, points: { show: true, space: 0, size: 6, width: 1, stroke: COLORS[c[0]], fill: COLORS[c[0]] } };
        })),
      hooks: {
        draw: [function (u) { drawExtras(u, l, rows, onScale ? ceiling : undefined); }],
        setScale: [function (u, key) {
          if (key !== 'x' || syncing) return;
          syncing = true;
          var min = u.scales.x.min;
          var max = u.scales.x.max;
          charts.forEach(function (c) { if (c.u !== u) c.u.setScale('x', { min: min, max: max }); });
          syncing = false;
          updateRange(min, max);
        }],
        setCursor: [function (u) { if (readout && u.cursor.idx !== null && u.cursor.idx !== undefined && u.cursor.left >= 0) readout.textContent = describeAt(l, d, u.cursor.idx); }],
      },
    };
    var u = new uPlot(opts, d.data, plot);
    u.setScale('x', { min: full.min, max: full.max });
    plot.addEventListener('dblclick', function () { zoom(full.min, full.max, null); });
    charts.push({ u: u, l: l, box: box });
  }

  var rangeEl = document.getElementById('timeline-range');
  function updateRange(min, max) {
    if (rangeEl) rangeEl.textContent = 'Showing ' + clock(min) + ' – ' + clock(max) + ' of ' + clock(full.max) + (mark ? ' · marked: ' + mark.label : '');
  }

  function zoom(from, to, m) {
    mark = m;
    syncing = true;
    charts.forEach(function (c) {
      c.box.classList.toggle('tl-focus', !!(m && m.lanes && m.lanes.indexOf(c.l.i) !== -1));
      c.u.setScale('x', { min: from, max: to });
      c.u.redraw(false, false);
    });
    syncing = false;
    updateRange(from, to);
  }

  // #timeline?from=12.3&to=45.6&key=main[&check=<id>]: zoom to the stretch (with a margin), mark it, scroll to the timeline.
  function followHash() {
    var hash = location.hash;
    if (hash.indexOf('#timeline') !== 0) return;
    var section = document.getElementById('timeline');
    var q = hash.indexOf('?') === -1 ? '' : hash.slice(hash.indexOf('?') + 1);
    var params = {};
    q.split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i > 0) { try { params[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (e) { /* ignore a bad member */ } }
    });
    var from = Number(params.from);
    var to = Number(params.to);
    if (params.from !== undefined && isFinite(from) && isFinite(to) && to >= from) {
      var keys = params.key ? params.key.split(',') : [];
      var laneIds = keys.map(function (k) { for (var i = 0; i < tl.lanes.length; i++) if (tl.lanes[i].name === k) return i; return -1; }).filter(function (i) { return i !== -1; });
      var pad = Math.max(1, (to - from) * 0.1);
      zoom(Math.max(full.min, from - pad), Math.min(full.max, to + pad), {
        from: from, to: to, lanes: laneIds.length ? laneIds : null,
        label: (params.check ? params.check + ', ' : '') + clock(from) + ' – ' + clock(to) + (keys.length ? ' on ' + keys.join(', ') : ''),
      });
      var focus = charts.filter(function (c) { return laneIds.indexOf(c.l.i) !== -1; })[0];
      (focus ? focus.box : section).scrollIntoView({ block: focus ? 'center' : 'start' });
    } else if (section) section.scrollIntoView({ block: 'start' });
  }

  shown.forEach(makeChart);
  updateRange(full.min, full.max);
  var reset = document.getElementById('timeline-reset');
  if (reset) reset.addEventListener('click', function () { zoom(full.min, full.max, null); });
  window.addEventListener('resize', function () {
    charts.forEach(function (c) { c.u.setSize({ width: Math.max(300, holder.clientWidth - 2), height: 150 }); });
  });
  window.addEventListener('hashchange', followHash);
  document.addEventListener('click', function (event) {
    var link = event.target.closest && event.target.closest('a[href^="#timeline"]');
    // The same hash again fires no hashchange: follow it here.
    if (link && location.hash === link.getAttribute('href')) { event.preventDefault(); followHash(); }
  });
  holder.setAttribute('data-charts', String(charts.length));
  // After the check list below is rendered (the next script): the page is then long enough to scroll the chart into view.
  setTimeout(followHash, 0);
})();
