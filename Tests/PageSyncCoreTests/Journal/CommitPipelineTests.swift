import Testing
import PageSyncCore

@Suite struct CommitPipelineTests {
    @Test func batchAcknowledgesEachGroupWhenWrittenAndSyncsOnTicks() {
        var p = CommitPipeline(mode: .batch)
        #expect(p.tick() == [], "nothing written, nothing to sync")
        #expect(p.didWrite(group: 1) == [.acknowledge(upTo: 1)])
        #expect(p.didWrite(group: 2) == [.acknowledge(upTo: 2)])
        #expect(p.tick() == [.sync(serial: 1, upTo: 2)])
        #expect(p.tick() == [], "one sync at a time")
        #expect(p.didWrite(group: 3) == [.acknowledge(upTo: 3)])
        #expect(p.syncFinished(serial: 1, error: nil) == [])
        #expect(p.synced == 2)
        #expect(p.tick() == [.sync(serial: 2, upTo: 3)])
    }

    @Test func alwaysAcknowledgesOnlyAfterACoveringSyncAndGroupsTheRest() {
        var p = CommitPipeline(mode: .always)
        #expect(p.didWrite(group: 1) == [.sync(serial: 1, upTo: 1)])
        // Written while the sync is in flight: they wait, and one sync covers both.
        #expect(p.didWrite(group: 2) == [])
        #expect(p.didWrite(group: 3) == [])
        #expect(p.acknowledged == 0)
        #expect(p.syncFinished(serial: 1, error: nil) == [.acknowledge(upTo: 1), .sync(serial: 2, upTo: 3)])
        #expect(p.syncFinished(serial: 2, error: nil) == [.acknowledge(upTo: 3)])
        #expect(p.tick() == [], "no timer syncs in always mode")
    }

    @Test func aWriteFailureFailsOnlyItsGroupWhenTheFileIsIntact() {
        var p = CommitPipeline(mode: .batch)
        _ = p.didWrite(group: 1)
        #expect(p.writeFailed(reason: "No space left on device", fileIntact: true)
            == [.fail(after: 1, reason: "No space left on device"), .acknowledge(upTo: 2)])
        #expect(p.acceptsChanges, "the next change tries again")
        #expect(p.didWrite(group: 3) == [.acknowledge(upTo: 3)])
    }

    @Test func aWriteFailureWhileASyncIsInFlightSettlesInOrder() {
        var p = CommitPipeline(mode: .always)
        #expect(p.didWrite(group: 1) == [.sync(serial: 1, upTo: 1)])
        #expect(p.writeFailed(reason: "EIO", fileIntact: true) == [.fail(after: 1, reason: "EIO")])
        #expect(p.acknowledged == 0, "group 1 is still being synced")
        #expect(p.syncFinished(serial: 1, error: nil) == [.acknowledge(upTo: 1), .sync(serial: 2, upTo: 2)])
        #expect(p.syncFinished(serial: 2, error: nil) == [.acknowledge(upTo: 2)])
    }

    @Test func aFileLeftDamagedRefusesChangesUntilARewrite() {
        var p = CommitPipeline(mode: .batch)
        _ = p.didWrite(group: 1)
        #expect(p.writeFailed(reason: "EIO", fileIntact: false)
            == [.fail(after: 1, reason: "EIO"), .acknowledge(upTo: 2), .rewrite])
        #expect(!p.acceptsChanges && p.refusal == "EIO")
        #expect(p.rewriteFinished(error: "still EIO") == [])
        #expect(!p.acceptsChanges && p.refusal == "still EIO")
        #expect(p.rewriteFinished(error: nil) == [])
        #expect(p.acceptsChanges)
        #expect(p.didWrite(group: 3) == [.acknowledge(upTo: 3)])
    }

    @Test func aFailedSyncInAlwaysModeFailsEveryUnacknowledgedGroup() {
        var p = CommitPipeline(mode: .always)
        _ = p.didWrite(group: 1)
        _ = p.didWrite(group: 2)
        #expect(p.syncFinished(serial: 1, error: "EIO") == [
            .fail(after: 0, reason: "sync failed: EIO"), .acknowledge(upTo: 2), .rewrite,
        ])
        #expect(!p.acceptsChanges)
        #expect(p.syncFinished(serial: 1, error: nil) == [], "a moot sync is ignored")
        #expect(p.rewriteFinished(error: nil) == [])
        #expect(p.didWrite(group: 3) == [.sync(serial: 2, upTo: 3)])
    }

    @Test func aFailedSyncInBatchModeKeepsWhatWasAcknowledgedAndRefusesUntilRewritten() {
        var p = CommitPipeline(mode: .batch)
        _ = p.didWrite(group: 1)
        _ = p.tick()
        // Group 1's replies are out: it stands. What fails is the turn being formed (group 2):
        // its changes were accepted before the refusal, and skipped, it would be acknowledged
        // without ever being written (a kill -9 before the rewrite lost an OK'd change).
        #expect(p.syncFinished(serial: 1, error: "EIO") == [.fail(after: 1, reason: "sync failed: EIO"), .rewrite])
        #expect(!p.acceptsChanges && p.refusal == "sync failed: EIO")
        #expect(p.acknowledged == 1)
        #expect(p.rewriteFinished(error: nil) == [])
        #expect(p.synced == 1 && p.acceptsChanges)
    }

    @Test func aDirectorySyncThatFailedAfterACompactionIsAFailedSync() {
        // The compacted file was renamed over the journal while a sync of the groups written
        // meanwhile waited: nothing unsynced is acknowledged, and the journal is written again.
        var p = CommitPipeline(mode: .always)
        let first = p.didWrite(group: 1)
        #expect(first == [.sync(serial: 1, upTo: 1)])
        let failed = p.syncFailed(reason: "directory sync after compaction: EIO")
        #expect(failed == [
            .fail(after: 0, reason: "sync failed: directory sync after compaction: EIO"), .acknowledge(upTo: 1), .rewrite,
        ])
        #expect(p.syncing == nil, "the sync waiting behind the compaction is moot")
        let moot = p.syncFinished(serial: 1, error: nil)
        #expect(moot == [])
        var b = CommitPipeline(mode: .batch)
        _ = b.didWrite(group: 1)
        let batch = b.syncFailed(reason: "EIO")
        #expect(batch == [.fail(after: 1, reason: "sync failed: EIO"), .rewrite], "acknowledged groups stand")
    }

    @Test func groupsSkippedWhileRefusingSettleAtOnceInBothModes() {
        for mode in Durability.allCases {
            var p = CommitPipeline(mode: mode)
            #expect(p.refuse(reason: "ENOSPC") == [.rewrite])
            #expect(p.skipped(group: 1) == [.acknowledge(upTo: 1)], "\(mode)")
            #expect(!p.acceptsChanges)
            #expect(p.rewriteFinished(error: nil) == [])
            #expect(p.acceptsChanges)
        }
    }

    // MARK: - Gathering (always mode)

    /// Sync 1 covers 3 records; 2 more are written while it is in flight. It ends at 1 ms,
    /// having taken 0.4 ms.
    private func gathering() -> CommitPipeline {
        var p = CommitPipeline(mode: .always)
        #expect(p.didWrite(group: 1, records: 3, at: 600_000) == [.sync(serial: 1, upTo: 1)])
        #expect(p.didWrite(group: 2, records: 2, at: 700_000) == [])
        #expect(p.syncFinished(serial: 1, error: nil, at: 1_000_000, took: 400_000)
            == [.acknowledge(upTo: 1), .gather(nanoseconds: 200_000)], "waits half as long as the sync took")
        #expect(p.gatherTarget == 5, "the 3 clients just answered, and the 2 waiting")
        return p
    }

    @Test func aSyncWithGroupsWaitingGathersUntilTheClientsJustAnsweredAreBack() {
        var p = gathering()
        #expect(p.didWrite(group: 3, records: 2, at: 1_050_000) == [], "4 of 5: keep gathering")
        #expect(p.didWrite(group: 4, records: 1, at: 1_100_000) == [.sync(serial: 2, upTo: 4)])
        #expect(p.gatherTarget == nil)
        #expect(p.gatherEnded() == [], "a wait already over does nothing")
        #expect(p.syncFinished(serial: 2, error: nil, at: 1_500_000, took: 400_000) == [.acknowledge(upTo: 4)],
                "nothing waiting: no gathering")
    }

    @Test func gatheringEndsAtTheDeadlineOnAWriteOrWhenTheTimerFires() {
        var p = gathering()
        #expect(p.didWrite(group: 3, records: 1, at: 1_200_000) == [.sync(serial: 2, upTo: 3)],
                "a write at the deadline starts the sync with what came back")
        var q = gathering()
        #expect(q.didWrite(group: 3, records: 1, at: 1_100_000) == [])
        #expect(q.gatherEnded() == [.sync(serial: 2, upTo: 3)], "the engine's timer ends the wait")
        #expect(q.gatherEnded() == [])
    }

    @Test func theGatherWaitIsAtMostOneMillisecondAndNoneAfterAnInstantSync() {
        var p = CommitPipeline(mode: .always)
        _ = p.didWrite(group: 1)
        _ = p.didWrite(group: 2)
        #expect(p.syncFinished(serial: 1, error: nil, at: 50_000_000, took: 30_000_000)
            == [.acknowledge(upTo: 1), .gather(nanoseconds: CommitPipeline.maximumGatherNanoseconds)])
        #expect(CommitPipeline.maximumGatherNanoseconds == 1_000_000)
        var q = CommitPipeline(mode: .always)
        _ = q.didWrite(group: 1)
        _ = q.didWrite(group: 2)
        #expect(q.syncFinished(serial: 1, error: nil, at: 1_000, took: 1) == [.acknowledge(upTo: 1), .sync(serial: 2, upTo: 2)])
    }

    @Test func onlyAFailedGroupWaitingIsSyncedAtOnce() {
        var p = CommitPipeline(mode: .always)
        _ = p.didWrite(group: 1, records: 4, at: 0)
        #expect(p.writeFailed(reason: "ENOSPC", fileIntact: true) == [.fail(after: 1, reason: "ENOSPC")])
        #expect(p.syncFinished(serial: 1, error: nil, at: 1_000_000, took: 500_000)
            == [.acknowledge(upTo: 1), .sync(serial: 2, upTo: 2)], "no records are waiting, so nobody gains by a wait")
    }

    @Test func aFailureWhileGatheringEndsTheGathering() {
        var p = gathering()
        #expect(p.writeFailed(reason: "EIO", fileIntact: false)
            == [.fail(after: 1, reason: "EIO"), .acknowledge(upTo: 3), .rewrite])
        #expect(p.gatherTarget == nil)
        #expect(p.gatherEnded() == [], "the timer firing later changes nothing")
        #expect(p.rewriteFinished(error: nil) == [])
        #expect(p.didWrite(group: 4, records: 1, at: 2_000_000) == [.sync(serial: 2, upTo: 4)])
    }

    @Test func batchModeNeverGathers() {
        var p = CommitPipeline(mode: .batch)
        _ = p.didWrite(group: 1, records: 5, at: 0)
        #expect(p.tick() == [.sync(serial: 1, upTo: 1)])
        #expect(p.didWrite(group: 2, records: 5, at: 100) == [.acknowledge(upTo: 2)])
        #expect(p.syncFinished(serial: 1, error: nil, at: 1_000_000, took: 900_000) == [])
        #expect(p.gatherTarget == nil)
    }
}
