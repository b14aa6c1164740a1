import ArgumentParser
import PageSyncCore
import PagerShell
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `pagesync [HOST:PORT | tls://HOST:PORT] [--room NAME] [--name NAME] [--token TOKEN | --token-file PATH] [--follow | --notes] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]`: wiring only.
struct PageSync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pagesync",
        abstract: "A terminal pager that keeps everyone in a room on the same page.",
        discussion: """
        Connects to a pagesyncd server and shows the room's current page. When anyone in the \
        room turns the page, every pager follows. When standard output is not a terminal, \
        prints the room's current page and exits.

        Keys (press h in the pager for all of them), as in less within a page:
          Space f PgDn     one screen down; at the end of the page, the next page
          b PgUp           one screen up; at the top, the previous page (at its end)
          j k Down Up      a line (<n>j: n lines)     d u       half a screen
          Enter            a line down (<n>Enter: n lines, as in less)
          g < Home         top of the page            G > End   bottom of the page
          <n>g <n>G        line n of the page         <n>%      n percent into it
          ] [              next / previous page       { }       first / last page
          :n :p            next / previous page       :<n>      and Enter: page n
          / ? n N          search (a regex); past the page, on through the document
          &pattern         only matching lines (&!pattern: the others; & alone: all)
          D                detach (browse on your own)    F   follow the room again
          p                pull the room to your page (on its page: to your line)
          x <n>x X         mark lines from the top (x again: extend); clear them
          L                pause / resume leading the room's line (presenter)
          -N               line numbers: the file's own (as less -N)
          A                raise / lower your hand
          a                the audience: who is where (d lowers a hand)
          Left Right       scroll chopped lines and wide tables sideways
          =                where you are, in full
          Ctrl-L           redraw             Ctrl-Z        suspend
          q Ctrl-C         quit

        In an open room with other readers, Space at the end of a page (b at its top) \
        first says so, and only a second press turns the page for everyone. A presenter \
        with control, and a reader alone in the room, turn it at once.

        A search that finds nothing more on the page goes on through the room's other \
        pages without moving you: / and ? say where the next match is, and n (N) shows \
        it, browsing on your own (F follows again).

        In a presenter room without --token, and with --follow, page turns detach you: you \
        browse on your own while the status line says where the room is; F snaps back.

        The room's line and mark: with control of a presenter room, your scrolling moves \
        the room's line (the document line at the top of the screen), and every follower \
        shows it at its top; L pauses that. x marks lines from the top (reverse video; a > \
        gutter under NO_COLOR and TERM=dumb), X clears them. A follower that scrolls on its \
        own reads by itself (the status line says "room at line N"); F and the room's next \
        change bring it back. In an open room scrolling is each reader's own, and p brings \
        everyone to your line.

        A page longer than the server sends at once (its max-text) is read in pieces as \
        you scroll, holding about 3 MiB of it at a time; G or End reads on to its last line. \
        Such a page is shown as sent (not rendered as markdown); search and & work on the \
        lines held.

        Documents named .md or .markdown are rendered as markdown (headings, emphasis, lists, \
        quotes, code and tables); --plain shows their text, --markdown renders any document. \
        NO_COLOR drops colours and TERM=dumb every escape sequence.

        --notes shows, in place of the page, the speaker notes of the room's page (markdown         rendered; j k scroll them), the next page's heading, page n of N, the time since         the talk began (the room's first page turn, or the view's start when the talk was         under way; t restarts it) and the clock. Its keys turn the room's page, as a         presentation remote does:
          ] Space n Right PgDn     next page       [ p Left PgUp Backspace   previous page
          Home End                 first, last     <digits> Enter            that page
          j k Down Up  d u         scroll notes    t   restart the timer     h ?  keys
        Notes are for those with control: in a presenter room give the token (--token,         --token-file or $PAGESYNC_TOKEN); without control the view quits with one line         that says why.
        """,
        version: PageSyncVersion.current)

    @Argument(help: ArgumentHelp(
        "The server, HOST:PORT, or tls://HOST:PORT for TLS (default 127.0.0.1:7777, or $PAGESYNC_SERVER when set; tls://HOST means port 7778).",
        valueName: "HOST:PORT"))
    var server: String?

    @Flag(name: .customLong("tls"), help: "Connect over TLS, verifying the server's certificate and host name (the same as tls:// before the address).")
    var tls = false

    @Option(name: .customLong("tls-ca"), help: ArgumentHelp("Trust the CA certificates in this PEM file instead of the system's (implies --tls).", valueName: "FILE"))
    var tlsCA: String?

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp(
        "Present this PEM certificate (chain) to a server that asks for client certificates, with --tls-key (implies --tls).",
        valueName: "FILE"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "FILE"))
    var tlsKey: String?

    @Flag(name: .customLong("tls-insecure"), help: "Over TLS, do NOT verify the server's certificate (testing only: anyone on the path can read and change the session; a warning is printed).")
    var tlsInsecure = false

    @Option(help: ArgumentHelp("The room to join (default: the server's first room).", valueName: "NAME"))
    var room: String?

    @Option(help: ArgumentHelp(
        "The name others see when you turn the page: 1-32 of A-Z a-z 0-9 . _ - (default: the server's guest-<n>).",
        valueName: "NAME"))
    var name: String?

    @Option(help: ArgumentHelp(
        "The control token of a presenter room; '-' asks for it without echo. Warning: a token given here shows in ps to every user; prefer --token-file or $PAGESYNC_TOKEN (default: none).",
        valueName: "TOKEN"))
    var token: String?

    @Option(help: ArgumentHelp("Read the control token from the first line of this file.", valueName: "PATH"))
    var tokenFile: String?

    @Flag(help: "Join as a follower only: no key ever moves the room (page turns browse on your own).")
    var follow = false

    @Flag(help: "The speaker's notes view: the notes of the room's page, the next page's heading, the timer and the clock, with keys that turn the room's page (needs control: the room's token in a presenter room).")
    var notes = false

    @Flag(name: [.customShort("N"), .customLong("line-numbers")],
          help: "Show the document's own line numbers (as less -N; the - N keys toggle them): line 1 of page 2 of a file split every 40 lines is 41.")
    var lineNumbers = false

    @Flag(help: "Render every document as markdown (default: only those named .md or .markdown).")
    var markdown = false

    @Flag(help: "Show every document as plain text, even one named .md (default: markdown for .md and .markdown).")
    var plain = false

    func validate() throws {
        _ = try address()
        if let name, let problem = PagerConfiguration.nameProblem(name, option: "--name") { throw ValidationError(problem) }
        if let room, let problem = PagerConfiguration.nameProblem(room, option: "--room") { throw ValidationError(problem) }
        if markdown && plain { throw ValidationError("--markdown and --plain: choose one") }
        if notes && follow { throw ValidationError("--notes and --follow: the notes view turns the room's page; choose one") }
        if let problem = PagerConfiguration.clientCertificateProblem(certificateFile: tlsCert, keyFile: tlsKey) {
            throw ValidationError(problem)
        }
        if let problem = TokenReader.problem(token: token, tokenFile: tokenFile, environment: ProcessInfoEnvironment.current) {
            throw ValidationError(problem)
        }
    }

    private func address() throws -> PagerServerAddress {
        var address: PagerServerAddress
        if let server {
            guard let parsed = PagerServerAddress(parsing: server) else {
                throw ValidationError(PagerServerAddress.AddressError(text: server, source: "HOST:PORT").description)
            }
            address = parsed
        } else {
            switch PagerServerAddress.fromEnvironment(ProcessInfoEnvironment.current) {
            case .success(let parsed): address = parsed
            case .failure(let error): throw ValidationError(error.description)
            }
        }
        if tls || tlsCA != nil || tlsInsecure || tlsCert != nil { address.tls = true }
        return address
    }

    func run() throws {
        let token: String?
        switch TokenReader.resolve(token: self.token, tokenFile: tokenFile, environment: ProcessInfoEnvironment.current) {
        case .success(let t): token = t
        case .failure(let problem):
            printToStandardError("pagesync: \(problem)")
            throw ExitCode(2)
        }
        var configuration = PagerConfiguration(server: try address(), room: room, name: name, token: token,
                                               followOnly: follow, tlsCAFile: tlsCA, tlsInsecure: tlsInsecure,
                                               markdown: markdown ? true : plain ? false : nil)
        configuration.tlsCertificateFile = tlsCert
        configuration.tlsKeyFile = tlsKey
        configuration.notes = notes
        configuration.lineNumbers = lineNumbers
        let status = PagerShell.run(configuration)
        if status != 0 { throw ExitCode(status) }
    }
}

/// Writes `line` and a newline to standard error.
func printToStandardError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// The process environment, without Foundation.
enum ProcessInfoEnvironment {
    static var current: [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let eq = text.firstIndex(of: "=") {
                result[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            entry += 1
        }
        return result
    }
}

PageSync.main()
