#!/usr/bin/env python3
"""Drive headless Chromium over the DevTools protocol: load a page at a given
viewport width, measure what the report checks need, click the page's own
links, and optionally take full-page screenshots.

  cdp_page.py URL WIDTH [--click CSS_SELECTOR]... [--shot FILE]

Prints one JSON object per state (after loading, then after each click):
  {"url", "width", "client_width", "scroll_width", "overflow": [elements
   reaching past the viewport], "cpu_line", "topsql": [{queryid, load,
   cpu_sampled, cpu_exact, text}], "blockers": [pids], "slice", "window"}
--shot FILE writes a PNG of the last state: its top 2400 px.

Python's standard library only: the WebSocket client below is the minimum
the protocol needs (masked text frames out, text frames in)."""
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

PROBE = r"""
(() => {
  const vw = document.documentElement.clientWidth;
  const over = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    const p = e.parentElement.getBoundingClientRect();
    // The outermost element reaching past the viewport names the culprit;
    // its children that overflow with it add nothing.
    if (r.width > 0 && r.right > vw + 1 && !(p.right > vw + 1)) {
      const cls = typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : '';
      const id = e.closest('section') ? '#' + e.closest('section').id + ' ' : '';
      over.push(id + e.tagName.toLowerCase() + cls + ' right=' + Math.round(r.right));
      if (over.length > 20) break;
    }
  }
  const rows = [...document.querySelectorAll('tr.topsql')].map(r => {
    const pre = r.querySelector('pre.sql');
    const code = r.querySelector('code.sql, details.sql summary code');
    return {queryid: r.dataset.queryid, load: parseFloat(r.dataset.load),
            cpu_sampled: r.dataset.cpuSampled === undefined ? null : parseFloat(r.dataset.cpuSampled),
            cpu_exact: r.dataset.cpuExact === undefined ? null : parseFloat(r.dataset.cpuExact),
            text: pre ? pre.textContent : (code ? code.textContent : '')};
  });
  const on = sel => { const a = document.querySelector(sel); return a ? a.textContent : null; };
  const line = document.querySelector('svg line.cpu-line');
  return JSON.stringify({url: location.href, client_width: vw,
    scroll_width: document.documentElement.scrollWidth, overflow: over,
    cpu_line: !!(line && line.getBoundingClientRect().width > 0),
    cpu_count: on('b.cpu-count'), avg_load: on('b.avg-load'),
    areas: document.querySelectorAll('svg.timeline polygon.area').length,
    topsql: rows, blockers: [...document.querySelectorAll('tr.blocker')].map(r => parseInt(r.dataset.pid)),
    compare: [...document.querySelectorAll('tr.delta')].map(r => [r.dataset.key, parseFloat(r.dataset.delta)]),
    slice: on('a.slice.on'), window: on('a.window.on'), title: on('#load h2')});
})()
"""


class WebSocket:
    def __init__(self, url):
        assert url.startswith('ws://')
        hostport, path = url[5:].split('/', 1)
        host, port = hostport.split(':')
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(('GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
                           'Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n' % (path, hostport, key)).encode())
        head = b''
        while b'\r\n\r\n' not in head:
            head += self.sock.recv(1)
        if b' 101 ' not in head.split(b'\r\n')[0]:
            raise RuntimeError('websocket handshake failed: %r' % head)

    def _read(self, n):
        buf = b''
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise RuntimeError('websocket closed')
            buf += chunk
        return buf

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                bytes([0x80 | 126]) + struct.pack('!H', n) if n < 65536 else
                                bytes([0x80 | 127]) + struct.pack('!Q', n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self):
        message = b''
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack('!H', self._read(2))[0]
            elif n == 127:
                n = struct.unpack('!Q', self._read(8))[0]
            payload = self._read(n)
            if b0 & 0x0f == 0x9:  # ping: answer it
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Page:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({'id': self.next_id, 'method': method, 'params': params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get('id') == self.next_id:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})

    def evaluate(self, expr):
        r = self.call('Runtime.evaluate', expression=expr, returnByValue=True)
        return r.get('result', {}).get('value')

    def wait_loaded(self, previous_url=None, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = self.evaluate('document.readyState + " " + location.href')
            if state and state.startswith('complete ') and state.split(' ', 1)[1] not in (previous_url, 'about:blank'):
                return
            time.sleep(0.2)
        raise RuntimeError('page did not load in %ss' % timeout)


def main():
    args = sys.argv[1:]
    url, width = args[0], int(args[1])
    clicks, shot, i = [], None, 2
    while i < len(args):
        if args[i] == '--click':
            clicks.append(args[i + 1])
        elif args[i] == '--shot':
            shot = args[i + 1]
        i += 2
    profile = tempfile.mkdtemp(prefix='psw_cdp.')
    chrome = subprocess.Popen(['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                               '--disable-background-networking', '--disable-component-update', '--disable-sync',
                               '--hide-scrollbars', '--remote-debugging-port=0', '--user-data-dir=' + profile,
                               '--window-size=%d,1000' % width, 'about:blank'],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, HOME=profile))
    try:
        port_file = os.path.join(profile, 'DevToolsActivePort')
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().count('\n') >= 1:
                break
            time.sleep(0.1)
        port = int(open(port_file).read().split('\n')[0])
        targets = json.load(urllib.request.urlopen('http://127.0.0.1:%d/json/list' % port, timeout=30))
        page = Page(WebSocket(next(t for t in targets if t['type'] == 'page')['webSocketDebuggerUrl']))
        page.call('Emulation.setDeviceMetricsOverride', width=width, height=1000, deviceScaleFactor=1, mobile=False)
        page.call('Page.navigate', url=url)
        page.wait_loaded()
        states = [json.loads(page.evaluate(PROBE))]
        for sel in clicks:
            before = states[-1]['url']
            if not page.evaluate('(() => { const a = document.querySelector(%s); if (!a) return false; a.click(); '
                                 'return true; })()' % json.dumps(sel)):
                raise RuntimeError('no element matches %s' % sel)
            page.wait_loaded(previous_url=before)
            states.append(json.loads(page.evaluate(PROBE)))
        for s in states:
            s['width'] = width
            print(json.dumps(s))
        if shot:
            metrics = page.call('Page.getLayoutMetrics')
            # The first screens: what a reader sees first, not the whole page.
            height = min(int(metrics['cssContentSize']['height']), 2400)
            page.call('Emulation.setDeviceMetricsOverride', width=width, height=height, deviceScaleFactor=1,
                      mobile=False)
            data = page.call('Page.captureScreenshot', format='png')['data']
            with open(shot, 'wb') as f:
                f.write(base64.b64decode(data))
    finally:
        chrome.terminate()
        try:
            chrome.wait(10)
        except subprocess.TimeoutExpired:
            chrome.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == '__main__':
    main()
