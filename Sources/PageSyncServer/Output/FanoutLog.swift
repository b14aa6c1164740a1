import PageSyncCore

/// A room's state lines of the current loop turn(s) that not every member has been offered yet.
///
/// A change no longer walks the room's members when it is made: its line is appended here,
/// and each member is offered what it has not seen either when the change's group is settled
/// (the fan-out pass, which offers and writes one member after another, so the first
/// follower is written before any work is done for the others) or earlier, right before
/// anything else is staged for that member, so what a member reads keeps the order things
/// happened in.
///
/// Each member keeps a ``Cursor`` into the log. The log is emptied only once every member
/// has been offered everything in it, and each emptying starts a new *run*: a cursor from an
/// earlier run has seen all of that run, so everything in the current one is new to it.
package struct FanoutLog {
    /// Where a member stands in a room's log: the run, and how many lines of it it was offered.
    package struct Cursor: Equatable {
        package var run: UInt64
        package var offered: Int

        package init(run: UInt64, offered: Int) {
            self.run = run
            self.offered = offered
        }
    }

    /// An empty log, in run 0.
    package init() {}

    /// The lines not yet offered to every member, oldest first, each with the group it waits for.
    package private(set) var lines: [(line: ByteLine, group: UInt64)] = []
    /// The current run; grows by one each time the log is emptied.
    package private(set) var run: UInt64 = 0
    /// The newest group any line in the log waits for.
    package private(set) var newestGroup: UInt64 = 0

    /// Whether every member has been offered everything.
    package var isEmpty: Bool { lines.isEmpty }

    /// The cursor of a member that has been offered everything so far (a new member, or one
    /// that just joined the room).
    package var end: Cursor { Cursor(run: run, offered: lines.count) }

    /// A room's new state line, waiting for `group`.
    package mutating func append(_ line: ByteLine, group: UInt64) {
        lines.append((line, group))
        newestGroup = max(newestGroup, group)
    }

    /// The lines a member at `cursor` has not been offered, oldest first.
    package func unseen(from cursor: Cursor) -> ArraySlice<(line: ByteLine, group: UInt64)> {
        cursor.run == run ? lines[min(cursor.offered, lines.count)...] : lines[...]
    }

    /// Whether a member at `cursor` has lines it was not offered (``unseen(from:)`` is not empty).
    package func hasUnseen(from cursor: Cursor) -> Bool {
        cursor.run != run || cursor.offered < lines.count
    }

    /// Whether every line may leave once `settled` is the newest settled group.
    package func isSettled(_ settled: UInt64) -> Bool { newestGroup <= settled }

    /// Every member has been offered everything: the log empties and a new run starts.
    package mutating func reset() {
        // One by one: `removeAll(keepingCapacity:)` destroys the lines through the runtime's
        // generic path, several times the cost of these releases.
        while lines.popLast() != nil {}
        newestGroup = 0
        run &+= 1
    }
}
