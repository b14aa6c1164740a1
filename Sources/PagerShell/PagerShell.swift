import UV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pager's imperative shell: runs `pagesync` on a libuv loop on the calling thread.
///
/// When standard output is a terminal, the interactive pager runs (raw mode, alternate screen,
/// keys, reconnection; see `PagerModel`). Otherwise the room's current page is printed to
/// standard output for scripts (`pagesync | grep ...`), and the process ends.
///
/// Either way the terminal is left as it was found, whatever the reason for ending.
public enum PagerShell {
    /// Runs until the pager ends and returns the exit status; any message for people has
    /// already been written to stderr. Blocks the calling thread (it becomes the loop thread).
    public static func run(_ configuration: PagerConfiguration) -> Int32 {
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            return fail("pagesync: cannot start the event loop: \(error)")
        }
        let connector: ServerConnector
        do {
            connector = try ServerConnector(configuration)
        } catch {
            loop.closeAllHandlesAndDrain()
            return fail("pagesync: TLS: \(error)")
        }
        if let warning = ServerConnector.insecureWarning(configuration) { FileDescriptorWriter.standardError.write(warning + "\n") }
        let outcome: (status: Int32, message: String?)?
        if isTerminal(STDOUT_FILENO) {
            let pager: InteractivePager
            do {
                pager = try InteractivePager(loop: loop, configuration: configuration, connector: connector)
            } catch {
                loop.closeAllHandlesAndDrain()
                return fail(error.description)
            }
            pager.start()
            loop.run()
            outcome = pager.outcome
        } else {
            let printer = PagePrinter(loop: loop, configuration: configuration, connector: connector)
            printer.start()
            loop.run()
            outcome = printer.outcome
        }
        loop.closeAllHandlesAndDrain()
        guard let outcome else { return fail("pagesync: the event loop stopped unexpectedly") }
        if let message = outcome.message { FileDescriptorWriter.standardError.write(message + "\n") }
        return outcome.status
    }

    private static func fail(_ message: String) -> Int32 {
        FileDescriptorWriter.standardError.write(message + "\n")
        return 1
    }
}
