import PageSyncCore

/// A terminal's size in character cells.
public struct TerminalSize: Equatable, Sendable {
    /// Columns (width).
    public var columns: Int
    /// Rows (height), the status line included.
    public var rows: Int

    /// A size; values below 1 are treated as 1 where it matters.
    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }
}

/// A room's state as the pager last heard it from the server.
public struct RoomView: Equatable, Sendable {
    /// The room's name.
    public var name: String
    /// The room's current page (1-based).
    public var page: Int
    /// The number of pages of the room's document (>= 1).
    public var pageCount: Int
    /// The room's version; only grows within one epoch.
    public var version: UInt64
    /// The room's history (`epoch=`): a different one means versions started over.
    public var epoch: String
    /// Who turned the page last (nil: nobody yet).
    public var by: String?
    /// The document's content id (page text is cached under it).
    public var doc: String
    /// Whether the room wraps around at its ends.
    public var wraps: Bool
    /// Whether this client may turn the room's pages.
    public var control: Bool
    /// The document's name (`file=`, percent-encoded; nil when the server did not say).
    public var file: String?
    /// The document's title (`title=`, decoded; nil when it has none).
    public var title: String?
    /// Whether the room gives everyone control (the greeting's `control=yes`), rather than being a
    /// presenter room where control takes a token.
    public var open: Bool
    /// The room's line: the document line of its page at its screens' top (`line=`, from 1; 1
    /// from a daemon that does not send it).
    public var line: Int = 1
    /// The room's marked lines of its page (`mark=`), or nil.
    public var mark: LineRange?

    /// A room view with every field given.
    public init(name: String, page: Int, pageCount: Int, version: UInt64, epoch: String = "", by: String?, doc: String,
                wraps: Bool, control: Bool, file: String? = nil, title: String? = nil, open: Bool? = nil) {
        self.file = file
        self.title = title
        self.open = open ?? control
        self.name = name
        self.page = page
        self.pageCount = pageCount
        self.version = version
        self.epoch = epoch
        self.by = by
        self.doc = doc
        self.wraps = wraps
        self.control = control
    }
}

/// Where the screen goes once a page's text is here.
package enum KeptPlace: Equatable, Sendable {
    /// This page line at the top (the last screen when the page is shorter now).
    case line(Int)
    /// The page's last screen.
    case end
    /// The room's line at the top, its mark in view (see ``PagerModel/showRoomFocus()``).
    case focus
}

/// Where you were reading when the connection dropped: the room, the page of its document, the
/// page line at the top of the screen, and how far chopped lines were scrolled sideways.
package struct ResumePlace: Equatable, Sendable {
    package var room: String
    package var key: PageKey
    package var line: Int
    package var sideways: Int
    /// The room's line and mark then: when they moved meanwhile, the screen follows them instead.
    package var roomLine = 1
    package var roomMark: LineRange?
}

/// What the pager was started with.
public struct PagerOptions: Sendable {
    /// The room to be in (`--room`); nil: the server's default room, kept across reconnects.
    public var room: String?
    /// The name to use (`--name`); nil: the server's `guest-<n>`.
    public var name: String?
    /// A control token for presenter rooms (`--token`), sent with `AUTH` after every greeting.
    public var token: String?
    /// How to name the server in messages, e.g. `127.0.0.1:7777`.
    public var server: String
    /// The terminal's size at start.
    public var size: TerminalSize
    /// Quit (status 1) instead of retrying when the very first connection fails before a greeting.
    public var quitIfFirstConnectionFails: Bool
    /// Seed for reconnection jitter (any value; fixed in tests).
    public var randomSeed: UInt64
    /// `--follow`: follower only; no key ever asks the room to change (page turns browse on your own).
    public var followOnly: Bool
    /// How much of the document's styling reaches the terminal (`NO_COLOR`, `TERM=dumb`).
    public var colors: ColorPolicy
    /// Whether pages are rendered as markdown (`--markdown`, `--plain`; default by the document's name).
    public var markdown: MarkdownChoice = .auto
    /// `--tls-insecure` over TLS: the status line says `TLS NOT VERIFIED` for as long as the pager runs.
    public var unverifiedTLS = false
    /// `-N`, `--line-numbers`: start with the document's line numbers shown.
    public var lineNumbers = false

    /// Options; only `server` is required.
    public init(room: String? = nil, name: String? = nil, token: String? = nil, server: String = "127.0.0.1:7777",
                size: TerminalSize = TerminalSize(columns: 80, rows: 24),
                quitIfFirstConnectionFails: Bool = true, randomSeed: UInt64 = 0, followOnly: Bool = false,
                colors: ColorPolicy = .full) {
        self.room = room
        self.name = name
        self.token = token
        self.server = server
        self.size = size
        self.quitIfFirstConnectionFails = quitIfFirstConnectionFails
        self.randomSeed = randomSeed
        self.followOnly = followOnly
        self.colors = colors
    }
}

/// Everything that can happen to the pager. The shell turns terminal bytes into keys
/// (with ``KeyDecoder``), socket bytes into lines, and reports connection changes.
public enum PagerEvent: Equatable, Sendable {
    /// A key was pressed.
    case key(Key)
    /// One line from the server, without its LF (a trailing CR is ignored). Feed every line,
    /// including the content lines of multi-line replies, in order.
    case serverLine(String)
    /// The TCP connection is up (the server's greeting comes next).
    case connected
    /// The connection closed or could not be made; the model answers with ``PagerEffect/connect(afterMilliseconds:)``
    /// (or ``PagerEffect/quit(status:message:)`` when the first connection fails).
    case disconnected(reason: String)
    /// The terminal was resized (SIGWINCH).
    case resized(TerminalSize)
    /// The process was continued after a suspend (SIGCONT): the screen must be redrawn.
    case resumed
    /// The time, every ``TerminalModel/tickMilliseconds`` (only to models that ask for it).
    case tick(ClockReading)
}

/// What the shell must do after an event, in order.
public enum PagerEffect: Equatable, Sendable {
    /// Write this command to the server (``CommandEncoder/bytes(_:)``).
    case send(Command)
    /// Close the current connection if any, and after the delay connect again; then report
    /// ``PagerEvent/connected`` or ``PagerEvent/disconnected(reason:)``.
    case connect(afterMilliseconds: Int)
    /// The screen changed: write ``PagerModel/frame()``.
    case repaint
    /// Clear the terminal (`ESC [ 2 J`), then write ``PagerModel/frame()`` (Ctrl-L, resume).
    case clearAndRepaint
    /// Ctrl-Z: restore the terminal, stop the process (SIGSTOP); on SIGCONT report ``PagerEvent/resumed``.
    case suspend
    /// Restore the terminal and exit with `status`, printing `message` (if any) to stderr.
    case quit(status: Int32, message: String?)
}

/// Terminal control strings the shell writes around the pager's frames.
public enum TerminalControl {
    /// Enter the alternate screen and hide the cursor.
    public static let enter = "\u{1B}[?1049h\u{1B}[?25l"
    /// Show the cursor and leave the alternate screen (write on every exit path and before suspending).
    public static let leave = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
    /// Clear the whole screen.
    public static let clearScreen = "\u{1B}[2J"
}
