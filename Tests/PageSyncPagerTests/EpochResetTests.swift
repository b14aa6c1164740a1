import PageSyncCore
import Testing
import PageSyncPager

@Suite struct EpochResetTests {
    @Test func anOlderVersionIsIgnoredWithinAnEpochButTakenFromANewOne() {
        var h = Harness(hello: hello(page: 4, version: 10) + " epoch=aaaaaaaaaaaaaaaa")
        #expect(h.model.room?.epoch == "aaaaaaaaaaaaaaaa")
        h.server(pageEvent(page: 2, version: 3) + " epoch=aaaaaaaaaaaaaaaa")
        #expect(h.model.room?.page == 4 && h.model.room?.version == 10, "stale within the same epoch")
        h.server(pageEvent(page: 2, version: 3) + " epoch=bbbbbbbbbbbbbbbb")
        #expect(h.model.room?.page == 2 && h.model.room?.version == 3 && h.model.room?.epoch == "bbbbbbbbbbbbbbbb",
                "a new epoch is a reset: its state is adopted although its version is lower")
        h.server(pageEvent(page: 5, version: 2) + " epoch=bbbbbbbbbbbbbbbb")
        #expect(h.model.room?.page == 2 && h.model.room?.version == 3, "and versions compare again within it")
        h.server(pageEvent(page: 5, version: 4) + " epoch=bbbbbbbbbbbbbbbb")
        #expect(h.model.room?.page == 5 && h.model.room?.version == 4)
    }
}
