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
        #expect(p.syncFinished(serial: 1, error: "EIO") == [.rewrite], "replies are out: nothing to undo")
        #expect(!p.acceptsChanges && p.refusal == "sync failed: EIO")
        #expect(p.rewriteFinished(error: nil) == [])
        #expect(p.synced == 1 && p.acceptsChanges)
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
}
