import Testing
import PageSyncCore

@Suite struct AddressLimiterTests {
    @Test func admitsUpToTheLimitPerAddress() {
        var l = AddressLimiter(limit: 3)
        let open: Set<Int> = [1, 2, 3, 4, 5]
        #expect(l.admit(address: "a", connection: 1) { open.contains($0) })
        #expect(l.admit(address: "a", connection: 2) { open.contains($0) })
        #expect(l.admit(address: "a", connection: 3) { open.contains($0) })
        #expect(!l.admit(address: "a", connection: 4) { open.contains($0) })
        #expect(l.admit(address: "b", connection: 5) { open.contains($0) }, "another address has its own count")
        #expect(l.count(address: "a") == 3)
    }

    @Test func aClosedConnectionFreesItsSlot() {
        var l = AddressLimiter(limit: 2)
        var open: Set<Int> = [1, 2]
        #expect(l.admit(address: "a", connection: 1) { open.contains($0) })
        #expect(l.admit(address: "a", connection: 2) { open.contains($0) })
        open.remove(1)
        open.insert(3)
        #expect(l.admit(address: "a", connection: 3) { open.contains($0) })
        #expect(l.count(address: "a") == 2)
        #expect(!l.admit(address: "a", connection: 4) { open.contains($0) || $0 == 4 })
    }

    @Test func sweepDropsAddressesWithNoOpenConnection() {
        var l = AddressLimiter(limit: 5)
        for i in 0..<100 { _ = l.admit(address: "10.0.0.\(i)", connection: i) { _ in true } }
        #expect(l.trackedAddressCount == 100)
        l.sweep { $0 % 10 == 0 }
        #expect(l.trackedAddressCount == 10)
    }

    @Test func theTableSweepsItselfAsConnectionsComeAndGo() {
        var l = AddressLimiter(limit: 1000)
        for i in 0..<10_000 { _ = l.admit(address: "a\(i)", connection: i) { $0 == i } }
        #expect(l.trackedAddressCount < 4200, "swept every 4096 admissions: \(l.trackedAddressCount)")
    }

    @Test func limitIsAtLeastOne() {
        #expect(AddressLimiter(limit: 0).limit == 1)
    }
}

@Suite struct IdleTrackerTests {
    @Test func expiresOnlyConnectionsIdleForTheTimeout() {
        var t = IdleTracker(timeoutMilliseconds: 1000)
        t.active(1, now: 0)
        t.active(2, now: 500)
        #expect(t.expire(now: 999) { _ in true } == [])
        #expect(t.expire(now: 1000) { _ in true } == [1])
        t.active(2, now: 1200)
        #expect(t.expire(now: 2100) { _ in true } == [])
        #expect(t.expire(now: 2200) { _ in true } == [2])
        #expect(t.count == 0, "expired connections are no longer tracked")
    }

    @Test func closedConnectionsAreDroppedSilently() {
        var t = IdleTracker(timeoutMilliseconds: 10)
        t.active(1, now: 0)
        t.active(2, now: 0)
        t.active(3, now: 0)
        t.remove(3)
        #expect(t.expire(now: 100) { $0 != 2 } == [1])
        #expect(t.count == 0)
    }

    @Test("adopting open connections (idle-timeout turned on by a reload): untracked ones are idle from then, tracked ones keep their time")
    func adoptTracksOnlyTheUntracked() {
        var t = IdleTracker(timeoutMilliseconds: 1000)
        t.active(1, now: 0)
        t.adopt([1, 2, 3], now: 600)
        #expect(t.count == 3)
        #expect(t.expire(now: 1000) { _ in true } == [1], "connection 1 kept its own time")
        #expect(t.expire(now: 1599) { _ in true } == [])
        #expect(t.expire(now: 1600) { _ in true } == [2, 3], "the adopted ones are idle from the adoption")
    }

    @Test("a removed connection is never reported, however long it stays quiet, and is no longer tracked")
    func removedConnectionIsNeverReported() {
        var t = IdleTracker(timeoutMilliseconds: 10)
        for id in 1...5 { t.active(id, now: 0) }
        t.remove(3)
        #expect(t.count == 4, "remove stops tracking at once, not at the next sweep")
        #expect(t.expire(now: 5) { _ in true } == [])
        #expect(t.expire(now: 10_000) { _ in true } == [1, 2, 4, 5])
        #expect(t.count == 0)
        // Removing an untracked connection changes nothing.
        t.remove(3)
        t.active(6, now: 20_000)
        t.remove(7)
        #expect(t.expire(now: 20_010) { _ in true } == [6])
    }

    @Test("closed and due connections in one sweep: the due ones are reported in id order, both are dropped")
    func closedAndDueInOneSweep() {
        var t = IdleTracker(timeoutMilliseconds: 10)
        for id in (1...40).reversed() { t.active(id, now: id <= 20 ? 0 : 50) }
        #expect(t.expire(now: 10) { $0 > 20 || $0 % 2 == 0 } == Array(stride(from: 2, through: 20, by: 2)))
        #expect(t.count == 20, "the 20 recent ones remain; 1...20 are dropped, closed or due")
        #expect(t.expire(now: 60) { _ in true } == Array(21...40))
    }

    @Test func manyExpireInIdOrder() {
        var t = IdleTracker(timeoutMilliseconds: 5)
        for id in (1...50).reversed() { t.active(id, now: 0) }
        #expect(t.expire(now: 5) { _ in true } == Array(1...50))
    }
}

@Suite struct WhoPageTests {
    @Test func firstPageOfALargeRoom() {
        let page = WhoPage(total: 3001, offset: 0, pageSize: 100)
        #expect(page.range == 0..<100)
        #expect(page.next == 100)
        #expect(page.header(total: 3001) == "OK WHO 3001 next=100")
    }

    @Test func middleAndLastPages() {
        #expect(WhoPage(total: 3001, offset: 100, pageSize: 100) == WhoPage(range: 100..<200, next: 200))
        #expect(WhoPage(total: 3001, offset: 2950, pageSize: 100) == WhoPage(range: 2950..<3001, next: nil))
        #expect(WhoPage(total: 3001, offset: 2901, pageSize: 100) == WhoPage(range: 2901..<3001, next: nil))
        #expect(WhoPage(total: 3001, offset: 2900, pageSize: 100).next == 3000)
    }

    @Test func smallRoomsKeepTheOldHeader() {
        let page = WhoPage(total: 3, offset: 0, pageSize: 100)
        #expect(page.range == 0..<3 && page.next == nil)
        #expect(page.header(total: 3) == "OK WHO 3")
    }

    @Test func offsetsPastTheEndAndOddSizes() {
        #expect(WhoPage(total: 3, offset: 3, pageSize: 100) == WhoPage(range: 3..<3, next: nil))
        #expect(WhoPage(total: 3, offset: Int.max, pageSize: 100) == WhoPage(range: 3..<3, next: nil))
        #expect(WhoPage(total: 0, offset: 0, pageSize: 100) == WhoPage(range: 0..<0, next: nil))
        #expect(WhoPage(total: 5, offset: -2, pageSize: 0) == WhoPage(range: 0..<1, next: 1))
        #expect(WhoPage(total: 5, offset: 0, pageSize: Int.max).range == 0..<5)
    }

    @Test func pagingVisitsEveryNameOnce() {
        var seen: [Int] = []
        var offset: Int? = 0
        while let o = offset {
            let page = WhoPage(total: 257, offset: o, pageSize: 10)
            seen += Array(page.range)
            offset = page.next
        }
        #expect(seen == Array(0..<257))
    }
}
