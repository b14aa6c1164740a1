/// The follower page in Debian's headless Chromium, driven by Selenium (python3-selenium) through
/// chromium-driver: it prints one `key: value` line per check; ``BrowserTests`` asserts on them
/// and restarts the daemon when the script asks (it writes `restart.request` in its directory
/// and waits for `restart.done`). Arguments: web port, TCP port, pages, directory, screenshot.
enum BrowserScript {
    static let source = #"""
        import os, random, subprocess, sys, time
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By

        web, tcp, pages, workdir, screenshot = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
        locked_web, locked_tcp = int(sys.argv[6]), int(sys.argv[7])

        def report(key, value):
            print(f"{key}: {value}", flush=True)

        def nc(lines, port=tcp):
            data = "".join(line + "\n" for line in lines).encode()
            return subprocess.run(["nc", "-q1", "127.0.0.1", str(port)], input=data, capture_output=True, timeout=20).stdout.decode()

        def wait(predicate, timeout):
            end = time.time() + timeout
            while time.time() < end:
                if predicate(): return True
                time.sleep(0.02)
            return predicate()

        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=720,900"]:
            options.add_argument(argument)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            def page(): return driver.execute_script("return document.body.dataset.page || ''")
            def text(): return driver.find_element(By.ID, "text").text

            driver.get(f"http://127.0.0.1:{web}/deck")
            report("loaded", wait(lambda: page() == "1", 15))
            report("first_text", text().strip())
            report("position", driver.find_element(By.ID, "position").text)

            # One turn made with nc: when (the browser's clock, the same machine's) the page changed.
            driver.execute_script("""
                window.turnedAt = null;
                const seen = document.body.dataset.page;
                new MutationObserver(() => {
                    if (window.turnedAt === null && document.body.dataset.page !== seen) window.turnedAt = Date.now();
                }).observe(document.body, { attributes: true });""")
            started = time.time() * 1000
            nc(["next"])
            wait(lambda: driver.execute_script("return window.turnedAt") is not None, 5)
            turned = driver.execute_script("return window.turnedAt")
            report("turn_ms", round(turned - started) if turned else "never")
            report("turn_text", text().strip())
            report("turn_position", driver.find_element(By.ID, "position").text)

            # 20 random turns in one nc session; the browser ends on the room's page.
            random.seed(int(time.time()))
            targets = [random.randint(1, pages) for _ in range(20)]
            if targets[-1] == 2: targets[-1] = 3
            nc([f"goto {target}" for target in targets])
            final = str(targets[-1])
            report("after_20", f"{wait(lambda: page() == final and text().strip() == f'this is page {final}', 5)} {page()} {final}")
            driver.save_screenshot(screenshot)

            # Browsing away and snapping back (arrow keys, f).
            body = driver.find_element(By.TAG_NAME, "body")
            body.send_keys("\ue012" if final != "1" else "\ue014")
            browsed = wait(lambda: page() != final, 5)
            # The room knows (VIEW): a presenter's counts include browser readers.
            report("who_browsing", wait(lambda: f"view=browse:{page()}" in nc(["who"]), 5))
            body.send_keys("f")
            report("browse_and_back", f"{browsed} {wait(lambda: page() == final, 5)}")
            report("who_following", wait(lambda: "view=browse:" not in nc(["who"]), 5))

            # A hand raised with the button, lowered by another member (nc, in this open room).
            driver.find_element(By.ID, "hand").click()
            report("hand_up", wait(lambda: "hand=up" in nc(["who"]), 5))
            report("hand_button", driver.find_element(By.ID, "hand").text)
            nc(["hand down all"])
            lowered = wait(lambda: driver.execute_script("return document.body.dataset.hand") == "down", 5)
            report("hand_lowered", f"{lowered} {driver.find_element(By.ID, 'hand').text}")

            # In an open room the reader may turn the room's page: the Turn button moves it.
            before = int(page())
            target = before + 1 if before < pages else before - 1
            driver.find_element(By.ID, "next" if target > before else "prev").click()
            report("open_turn", f"{wait(lambda: f'page={target} ' in nc(['status']), 5)} {wait(lambda: page() == str(target), 5)}")
            final = str(target)

            # The room's line and mark on a long text page: line 30 at the top, lines 31-32 marked.
            driver.get(f"http://127.0.0.1:{web}/walk")
            wait(lambda: page() == "1", 10)
            nc(["join walk", "line 30", "mark 31-32"])
            def focused():
                return driver.execute_script("""
                    const top = document.querySelector('#text span[data-line="30"]');
                    const marked = [...document.querySelectorAll('#text .marked')].map(s => s.dataset.line).join(',');
                    return top ? Math.round(top.getBoundingClientRect().top) + ' ' + marked : 'none';""")
            report("focus", f"{wait(lambda: focused().endswith(' 31,32') and abs(int(focused().split()[0])) < 40, 5)} {focused()}")
            report("focus_position", driver.find_element(By.ID, "position").text)

            # A hostile markdown page is shown as text: no element, no script run.
            driver.get(f"http://127.0.0.1:{web}/hostile")
            wait(lambda: page() == "1", 10)
            report("hostile_heading", driver.execute_script("return document.querySelector('#text h1')?.textContent"))
            report("hostile_elements", driver.execute_script("return document.querySelectorAll('#text script, #text img, #text b, #text [onerror]').length"))
            report("hostile_hrefs", driver.execute_script("return [...document.querySelectorAll('#text a')].map(a => JSON.stringify(a.getAttribute('href'))).join(' ')"))
            report("hostile_ran", driver.execute_script("return String(window.pwned)"))
            report("hostile_text", "<script>window.pwned = 1</script>" in text() and "<b>raw</b>" in text() and "onerror=" in text())

            # On a phone (390 px wide, touch): nothing wider than the screen, type of 16 px or more;
            # for a screen reader the page's text is a live region and the document's headings are
            # headings; a dark system scheme gets a dark page.
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
            driver.get(f"http://127.0.0.1:{web}/hostile")
            wait(lambda: page() == "1", 10)
            report("phone", driver.execute_script("""
                const d = document.documentElement, size = parseFloat(getComputedStyle(document.getElementById('text')).fontSize);
                return `${d.scrollWidth <= d.clientWidth} ${size >= 16}`;"""))
            report("reader", driver.execute_script("""
                const t = document.getElementById('text');
                return `${t.getAttribute('aria-live')} ${document.getElementById('position').getAttribute('aria-live')} ${t.querySelectorAll('h1').length}`;"""))
            def background(): return driver.execute_script("return getComputedStyle(document.body).backgroundColor")
            light = background()
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
            dark = background()
            def luminance(colour): return sum(int(v) for v in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3])
            report("scheme", f"{luminance(light) > 600} {luminance(dark) < 150}")
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

            # The daemon is killed and restarted: the page reconnects and resyncs.
            driver.get(f"http://127.0.0.1:{web}/deck")
            report("reloaded", wait(lambda: page() == final, 10))
            open(os.path.join(workdir, "restart.request"), "w").close()
            if not wait(lambda: os.path.exists(os.path.join(workdir, "restart.done")), 30):
                report("restart", "not done")
                sys.exit(1)
            restarted = time.time()
            target = "1" if final != "1" else "2"
            nc([f"goto {target}"])
            synced = wait(lambda: page() == target, 5)
            report("resync", f"{synced} {round((time.time() - restarted) * 1000)}")
            report("status", driver.find_element(By.ID, "status").text)

            # The restarted daemon closes connections silent for 2 s (its greeting says idle=2):
            # the page, which only follows, keeps its connection with a PING after 1 s of silence.
            time.sleep(5)
            info = nc(["info clients"])
            closed = [line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("closed_idle:")]
            report("idle_kept", f"{closed[0] if closed else '-'} {driver.find_element(By.ID, 'status').text}")

            # A room that needs a token (another daemon, --token): no Turn buttons and n turns
            # nothing; a wrong token is refused; the right one, typed into the page, goes with AUTH
            # over the socket (never into the URL; no cookie) and brings the Turn buttons.
            driver.get(f"http://127.0.0.1:{locked_web}/talk")
            wait(lambda: page() == "1", 10)
            def shown(element): return driver.execute_script(f"return !document.getElementById('{element}').hidden")
            locked = wait(lambda: shown("auth"), 5) and not shown("turning")
            driver.find_element(By.TAG_NAME, "body").send_keys("n")
            time.sleep(0.5)
            unmoved = "page=1 " in nc(["status"], locked_tcp)
            driver.find_element(By.ID, "token").send_keys("wrong\n")
            refused = wait(lambda: "403" in driver.find_element(By.ID, "status").text, 5) and not shown("turning")
            driver.find_element(By.ID, "token").send_keys("s3cret\n")
            granted = wait(lambda: shown("turning"), 5)
            driver.find_element(By.ID, "next").click()
            moved = wait(lambda: "page=2 " in nc(["status"], locked_tcp), 5) and wait(lambda: page() == "2", 5)
            report("token_room", f"{locked} {unmoved} {refused} {granted} {moved}")
            report("token_kept_out", "s3cret" not in driver.current_url + driver.execute_script("return document.cookie + location.href"))
            report("cookies", len(driver.get_cookies()))
        finally:
            driver.quit()
        """#
}
