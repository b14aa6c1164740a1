import PageSyncPager
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
        if configuration.notes && !isTerminal(STDOUT_FILENO) {
            loop.closeAllHandlesAndDrain()
            return fail("pagesync --notes: the notes view needs a terminal (standard output is not one)")
        }
        if isTerminal(STDOUT_FILENO) {
            let result = configuration.notes
                ? runInteractive(loop: loop, configuration: configuration, connector: connector, model: NotesViewModel.init)
                : runInteractive(loop: loop, configuration: configuration, connector: connector, model: PagerModel.init)
            guard case .success(let ended) = result else {
                loop.closeAllHandlesAndDrain()
                if case .failure(let error) = result { return fail(error.description) }
                return 1
            }
            outcome = ended
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

    /// Runs the interactive pager with `model` until it ends; its outcome (nil if the loop
    /// stopped without one), or why it could not start.
    private static func runInteractive<Model: TerminalModel>(
        loop: EventLoop, configuration: PagerConfiguration, connector: ServerConnector,
        model: (PagerOptions) -> Model
    ) -> Result<(status: Int32, message: String?)?, PagerShellError> {
        let pager: InteractivePager<Model>
        do {
            pager = try InteractivePager(loop: loop, configuration: configuration, connector: connector, model: model)
        } catch {
            return .failure(error)
        }
        pager.start()
        loop.run()
        return .success(pager.outcome)
    }

    private static func fail(_ message: String) -> Int32 {
        FileDescriptorWriter.standardError.write(message + "\n")
        return 1
    }
}
