import Testing
import PageSyncCore

/// Compaction's decisions: when it starts, where a group goes in each phase, and what a
/// failure at each step means. The rename is the turning point.
@Suite struct JournalCompactionTests {
    let mib = 1 << 20

    /// A compaction taken to `phase` (snapshot of 100 bytes, no tail).
    func compaction(in phase: JournalCompaction.Phase) -> JournalCompaction {
        var c = JournalCompaction()
        guard phase != .idle else { return c }
        c.start()
        guard phase != .snapshotting else { return c }
        let written = c.snapshotWritten(size: 100, error: nil, now: 0)
        #expect(written)
        let appended = c.tailAppended(error: nil, now: 0)
        #expect(appended)
        guard phase != .switching else { return c }
        c.finishStarted()
        return c
    }

    // MARK: - When

    @Test func dueOnceFourTimesTheLiveStateAndPastAMebibyteOrTheFreeSpace() {
        let c = JournalCompaction()
        #expect(!c.isDue(records: mib, live: 1000, free: nil, now: 0), "at the minimum: not yet")
        #expect(c.isDue(records: mib + 1, live: 1000, free: nil, now: 0))
        #expect(!c.isDue(records: 2 * mib, live: mib, free: nil, now: 0), "not four times the live state")
        // A small disk: due once the journal takes as much as is left, so it never fills it.
        #expect(!c.isDue(records: 60_000, live: 1000, free: 100_000, now: 0))
        #expect(c.isDue(records: 60_000, live: 1000, free: 60_000, now: 0))
        #expect(!c.isDue(records: 3000, live: 1000, free: 0, now: 0), "nothing to gain below four times")
    }

    @Test func aWriteThatFailedForSpaceMakesAnyGainWorthIt() {
        let c = JournalCompaction()
        #expect(c.isDue(records: 1500, live: 1000, free: 0, now: 0, forSpace: true))
        #expect(!c.isDue(records: 1000, live: 1000, free: 0, now: 0, forSpace: true), "already as small as it gets")
    }

    @Test func aFailureWaitsTenSecondsAndAFullDiskOne() {
        var c = JournalCompaction()
        c.start()
        let failed = c.snapshotWritten(size: 0, error: "EIO", now: 5000)
        #expect(!failed)
        #expect(c.phase == .idle && c.notBefore == 15_000)
        #expect(!c.isDue(records: 2 * mib, live: 10, free: nil, now: 14_999) && c.isDue(records: 2 * mib, live: 10, free: nil, now: 15_000))
        c.start()
        let second = c.snapshotWritten(size: 10, error: nil, now: 20_000)
        #expect(second)
        let full = c.tailAppended(error: "No space left on device", now: 20_000, fullDisk: true)
        #expect(!full)
        #expect(c.notBefore == 21_000)
    }

    @Test func oneSnapshotJobAtATimeEvenAfterItsCompactionWasGivenUp() {
        var c = compaction(in: .snapshotting)
        let now = c.rewriteRequested(now: 0)
        #expect(now, "before the rename a rewrite may go ahead")
        #expect(c.phase == .idle && c.snapshotJobRunning)
        #expect(!c.isDue(records: 2 * mib, live: 10, free: nil, now: 1_000_000), "the old job still writes journal.compact")
        let late = c.snapshotWritten(size: 100, error: nil, now: 1_000_000)
        #expect(!late, "its file is removed, not used")
        #expect(c.isDue(records: 2 * mib, live: 10, free: nil, now: 1_000_000))
    }

    @Test func aCompactionStartedForSpaceHoldsGroupsUntilItEnds() {
        var c = JournalCompaction()
        c.start(forSpace: true)
        #expect(c.holdsGroups)
        let written = c.snapshotWritten(size: 100, error: nil, now: 0)
        let appended = c.tailAppended(error: nil, now: 0)
        #expect(written && appended && c.holdsGroups, "through switching")
        c.finishStarted()
        #expect(c.holdsGroups)
        _ = c.finishEnded(.renamed(directorySyncError: nil), now: 0)
        #expect(!c.holdsGroups)
        c.start(forSpace: true)
        let failed = c.snapshotWritten(size: 0, error: "ENOSPC", now: 0, fullDisk: true)
        #expect(!failed && !c.holdsGroups, "a failed one holds nothing: writes are tried again")
        var ordinary = JournalCompaction()
        ordinary.start()
        #expect(!ordinary.holdsGroups, "an ordinary compaction lets groups through to both files")
    }

    // MARK: - Where each group goes

    @Test func groupsWrittenWhileSnapshottingWaitInTheTailThenGoToBothFiles() {
        var c = JournalCompaction()
        let alone = c.groupWritten([1, 2, 3])
        #expect(alone == nil, "no compaction: the journal only")
        c.start()
        let (first, second) = (c.groupWritten([1, 2, 3]), c.groupWritten([4]))
        #expect(first == nil && second == nil)
        #expect(c.tail == [1, 2, 3, 4])
        _ = c.snapshotWritten(size: 100, error: nil, now: 0)
        _ = c.tailAppended(error: nil, now: 0)
        #expect(c.phase == .switching && c.newSize == 104 && c.tail.isEmpty)
        let both = c.groupWritten([5, 6])
        #expect(both == 104)
        c.newFileWritten(count: 2)
        c.finishStarted()
        let during = c.groupWritten([7])
        #expect(during == 106, "still both files while the job runs")
    }

    // MARK: - Failures around the rename

    @Test func aNewFileWriteFailureBeforeTheJobAbandonsButDuringItFailsTheGroup() {
        var switching = compaction(in: .switching)
        let early = switching.newFileWriteFailed(reason: "ENOSPC", now: 0)
        #expect(early == .abandon)
        #expect(switching.phase == .idle)
        var finishing = compaction(in: .finishing)
        let late = finishing.newFileWriteFailed(reason: "ENOSPC", now: 0)
        #expect(late == .failGroup, "the file may be the journal already")
        #expect(finishing.phase == .finishing && finishing.newSize == 100)
    }

    @Test func theJobEndingRenamedAdoptsTheNewFileWhateverFailedAfterTheRename() {
        var ok = compaction(in: .finishing)
        let adopted = ok.finishEnded(.renamed(directorySyncError: nil), now: 0)
        #expect(adopted == .adopt(size: 100))
        #expect(ok.phase == .idle && ok.notBefore == 0)
        var dirSync = compaction(in: .finishing)
        let failedSync = dirSync.finishEnded(.renamed(directorySyncError: "Input/output error"), now: 0)
        #expect(failedSync == .adoptAfterFailedSync(size: 100, reason: "directory sync after compaction: Input/output error"))
        var notRenamed = compaction(in: .finishing)
        let abandoned = notRenamed.finishEnded(.notRenamed(reason: "rename: EIO"), now: 7)
        #expect(abandoned == .abandon(reason: "rename: EIO"))
        #expect(notRenamed.notBefore == 7 + JournalCompaction.retryAfterFailure)
    }

    @Test func aRewriteWaitsForTheJobThatMayRename() {
        var c = compaction(in: .finishing)
        let mayRewrite = c.rewriteRequested(now: 0)
        #expect(!mayRewrite && c.rewriteWaiting && c.phase == .finishing)
        _ = c.finishEnded(.renamed(directorySyncError: nil), now: 0)
        let (waited, again) = (c.takeWaitingRewrite(), c.takeWaitingRewrite())
        #expect(waited && !again)
        var before = compaction(in: .switching)
        let beforeJob = before.rewriteRequested(now: 0)
        #expect(beforeJob && before.phase == .idle, "before the job: abandon and rewrite now")
        var idle = JournalCompaction()
        let idleRewrite = idle.rewriteRequested(now: 0)
        #expect(idleRewrite && idle.notBefore == 0)
    }
}
