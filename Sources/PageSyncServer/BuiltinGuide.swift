import PageSyncCore

/// The document a room serves when nothing else is configured: a short guide
/// to pagesync, paged with form feeds. It is what `pagesyncd` with no
/// arguments shows, so a first run needs no files at all.
package enum BuiltinGuide {
    /// The guide's pages for a daemon reachable at `address`, joined with form feeds into one
    /// document: its examples name that host and port.
    package static func bytes(address: ListenAddress) -> [UInt8] {
        Array(pages(address: address).joined(separator: "\u{0C}\n").utf8)
    }

    /// The address to show for a listening address: a wildcard host (`0.0.0.0`, `::`) is
    /// reached through loopback.
    package static func reachable(_ address: ListenAddress) -> ListenAddress {
        switch address.host {
        case "0.0.0.0", "": ListenAddress(host: "127.0.0.1", port: address.port)
        case "::": ListenAddress(host: "::1", port: address.port)
        default: address
        }
    }

    /// The guide's pages, its examples naming `address` (see ``reachable(_:)``).
    package static func pages(address listening: ListenAddress) -> [String] {
        let address = reachable(listening)
        let host = address.host
        let port = address.port
        return [
        """
        pagesync: one page, many terminals

        You are reading the built-in guide of pagesyncd, the pagesync daemon.
        Everyone connected to this room sees the same page. When anyone turns
        the page, every screen follows.

        Turn the page with ] in the pager (or Space on the last screen of a
        page: twice when others read here), or from any shell:

            printf 'next\\n' | nc -q1 \(host) \(port)

        """,
        """
        Turning pages

        NEXT and PREV move one page. FIRST and LAST jump to the ends.
        GOTO 4 jumps to page 4. Pages are numbered from 1.

        The room stops at its ends unless it is configured to wrap around.
        Moving past a stopping end is answered with ERR 416 and changes
        nothing.

        """,
        """
        Never out of step

        Every change is sent to everyone as the whole state:

            PAGE room=guide page=3 pages=6 version=7 by=ann doc=... epoch=...

        The version only grows within an epoch; a new epoch means the saved
        state was lost, so take its state as it is. A client that missed
        events is right again after the next one. NEXT IF 7 moves only if
        the room is still at version 7, so two people pressing next together
        move it once.

        """,
        """
        Presenter rooms

        A room can require a control token. Everyone may follow and read;
        only clients that sent AUTH <token> may turn its pages. Others get
        ERR 403 and can still browse on their own in the pager.

        """,
        """
        Your own documents

        Serve any UTF-8 text file, one room per file:

            pagesyncd --listen \(address) notes.txt slides.md

        Pages split at form feeds, and Markdown (.md) at its top-level
        --- rules (else at its headings); --split headings, --split lines:40
        and others set it for every file. The pager renders Markdown:
        headings, lists, code and tables.

        """,
        """
        That is all

        Read PROTOCOL.md for every command, and README.md to run pagesyncd
        under systemd. Send HELP for the list of commands, QUIT to leave.

        """,
        ]
    }
}
