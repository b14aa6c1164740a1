/// The follower page `--web-listen` serves at `/` and `/<room>`, and its style: embedded in the
/// binary (no CDN, no build step). The script is ``WebScript``, served as `/app.js` so that the
/// page's `Content-Security-Policy` allows no inline script at all.
package enum WebPage {
    /// The page: the room's name as its heading, page n of N and who turned it in a status
    /// line, the page's text in a live region (screen readers read each new page), buttons to
    /// browse, to go back to the room's page, to raise a hand, and to turn the room's page once
    /// allowed.
    package static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>pagesync</title>
        <link rel="stylesheet" href="/app.css">
        <script src="/app.js" defer></script>
        </head>
        <body>
        <header>
        <h1 id="room">pagesync</h1>
        <p id="status" role="status">connecting…</p>
        </header>
        <main>
        <p id="position" aria-live="polite"></p>
        <article id="text" aria-live="polite" tabindex="0"></article>
        </main>
        <nav aria-label="pages">
        <button id="back" type="button" title="Previous page (←)">◀ Browse</button>
        <button id="follow" type="button" title="Back to the room's page (f)" hidden>Room's page</button>
        <button id="forward" type="button" title="Next page (→)">Browse ▶</button>
        <button id="hand" type="button" title="Raise or lower your hand (h)" aria-pressed="false">Raise hand</button>
        <span id="turning" hidden>
        <button id="prev" type="button" title="Turn the room's page back (p)">Turn back</button>
        <button id="next" type="button" title="Turn the room's page (n)">Turn</button>
        </span>
        </nav>
        <form id="auth" hidden>
        <label for="token">Token to turn pages</label>
        <input id="token" type="password" autocomplete="off">
        <button type="submit">Unlock</button>
        </form>
        <noscript><p>This page follows the room with a small script; without it, use the pager or nc.</p></noscript>
        </body>
        </html>

        """

    /// Large type, a narrow column that fits a phone, light or dark as the reader's system
    /// prefers.
    package static let css = """
        :root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfb; --muted: #5c5c5c; --accent: #0b57d0; --mark: #fff3b0; }
        @media (prefers-color-scheme: dark) { :root { --fg: #e8e8e3; --bg: #16171a; --muted: #a9a9a3; --accent: #8ab4f8; --mark: #4a4210; } }
        html { font-size: 120%; }
        body { margin: 0 auto; max-width: 52rem; padding: 1rem; color: var(--fg); background: var(--bg);
               font-family: system-ui, sans-serif; line-height: 1.5; }
        h1 { font-size: 1.4rem; margin: 0; }
        #status, #position { color: var(--muted); margin: 0.25rem 0; }
        #text { min-height: 50vh; border-top: 1px solid var(--muted); padding-top: 0.5rem; overflow-wrap: anywhere; }
        #text pre { white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 1rem; }
        #text .marked { background: var(--mark); outline: 1px solid var(--accent); }
        #text table { border-collapse: collapse; } #text td, #text th { border: 1px solid var(--muted); padding: 0.2rem 0.5rem; }
        #text a { color: var(--accent); }
        nav, form { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 1rem 0; }
        button, input { font: inherit; padding: 0.5rem 0.9rem; min-height: 2.75rem; }
        button { color: var(--bg); background: var(--accent); border: 0; border-radius: 0.4rem; }
        button[disabled] { opacity: 0.4; }
        [hidden] { display: none !important; }

        """
}
