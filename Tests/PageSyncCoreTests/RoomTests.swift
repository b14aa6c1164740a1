import Testing
import PageSyncCore

private func page(_ n: Int) -> PageNumber { PageNumber(n)! }

private func room(page p: Int = 1, of count: Int = 6, version: UInt64 = 0, wraps: Bool = false, token: Bool = false, by: String? = nil, doc: String = "d1") -> Room {
    Room(name: "guide", policy: RoomPolicy(wraps: wraps, requiresToken: token),
         state: RoomState(page: page(p), pageCount: count, version: version, by: by, doc: doc))
}

@Suite struct RoomTests {
    @Test func initClampsPageAndCount() {
        #expect(room(page: 9, of: 6).state.page == page(6))
        #expect(room(page: 3, of: 6).state.page == page(3))
        let zero = room(page: 4, of: 0)
        #expect(zero.state.pageCount == 1)
        #expect(zero.state.page == page(1))
        #expect(room(page: 2, of: -5).state.pageCount == 1)
        #expect(room(version: 42).state.version == 42)
        #expect(room().name == "guide")
    }

    @Test func nextMovesAndBumpsVersion() {
        var r = room(page: 2, version: 7)
        #expect(go(&r, .next, ifVersion: nil, by: "ann", hasControl: true) == .success(.moved))
        #expect(r.state == RoomState(page: page(3), pageCount: 6, version: 8, by: "ann", doc: "d1"))
    }

    @Test func previousMoves() {
        var r = room(page: 2, version: 7, by: "bob")
        #expect(go(&r, .previous, ifVersion: nil, by: "ann", hasControl: true) == .success(.moved))
        #expect(r.state.page == page(1))
        #expect(r.state.version == 8)
        #expect(r.state.by == "ann")
    }

    @Test func firstLastGoto() {
        var r = room(page: 3)
        #expect(go(&r, .last, ifVersion: nil, by: "a", hasControl: true) == .success(.moved))
        #expect(r.state.page == page(6))
        #expect(go(&r, .first, ifVersion: nil, by: "b", hasControl: true) == .success(.moved))
        #expect(r.state.page == page(1))
        #expect(go(&r, .goto(page(4)), ifVersion: nil, by: "c", hasControl: true) == .success(.moved))
        #expect(r.state.page == page(4))
        #expect(r.state.version == 3)
        #expect(r.state.by == "c")
    }

    @Test func stopAtEnds() {
        var last = room(page: 6, version: 3, by: "x")
        let before = last.state
        #expect(go(&last, .next, ifVersion: nil, by: "a", hasControl: true) == .failure(.pastEnd(.last)))
        #expect(last.state == before)
        var first = room(page: 1, version: 3)
        #expect(go(&first, .previous, ifVersion: nil, by: "a", hasControl: true) == .failure(.pastEnd(.first)))
        #expect(first.state.version == 3)
    }

    @Test func wrapAtEnds() {
        var r = room(page: 6, wraps: true)
        #expect(go(&r, .next, ifVersion: nil, by: "a", hasControl: true) == .success(.moved))
        #expect(r.state.page == page(1))
        #expect(r.state.version == 1)
        #expect(go(&r, .previous, ifVersion: nil, by: "a", hasControl: true) == .success(.moved))
        #expect(r.state.page == page(6))
        #expect(r.state.version == 2)
    }

    @Test func singlePageRooms() {
        var wrapping = room(page: 1, of: 1, version: 5, wraps: true)
        #expect(go(&wrapping, .next, ifVersion: nil, by: "a", hasControl: true) == .success(.unchanged))
        #expect(go(&wrapping, .previous, ifVersion: nil, by: "a", hasControl: true) == .success(.unchanged))
        #expect(go(&wrapping, .first, ifVersion: nil, by: "a", hasControl: true) == .success(.unchanged))
        #expect(go(&wrapping, .last, ifVersion: nil, by: "a", hasControl: true) == .success(.unchanged))
        #expect(go(&wrapping, .goto(page(1)), ifVersion: nil, by: "a", hasControl: true) == .success(.unchanged))
        #expect(wrapping.state.version == 5)
        #expect(wrapping.state.by == nil)

        var stopping = room(page: 1, of: 1)
        #expect(go(&stopping, .next, ifVersion: nil, by: "a", hasControl: true) == .failure(.pastEnd(.last)))
        #expect(go(&stopping, .previous, ifVersion: nil, by: "a", hasControl: true) == .failure(.pastEnd(.first)))
        #expect(go(&stopping, .goto(page(2)), ifVersion: nil, by: "a", hasControl: true) == .failure(.noSuchPage(page(2))))
    }

    @Test func unchangedDoesNotBumpVersionOrBy() {
        var r = room(page: 1, version: 9, by: "bob")
        let before = r.state
        #expect(go(&r, .first, ifVersion: nil, by: "ann", hasControl: true) == .success(.unchanged))
        #expect(go(&r, .goto(page(1)), ifVersion: 9, by: "ann", hasControl: true) == .success(.unchanged))
        #expect(r.state == before)
        var l = room(page: 6, version: 9)
        #expect(go(&l, .last, ifVersion: nil, by: "ann", hasControl: true) == .success(.unchanged))
        #expect(l.state.version == 9)
    }

    @Test func gotoBeyondCount() {
        var r = room(page: 2, version: 4)
        #expect(go(&r, .goto(page(7)), ifVersion: nil, by: "a", hasControl: true) == .failure(.noSuchPage(page(7))))
        #expect(go(&r, .goto(page(Int.max)), ifVersion: nil, by: "a", hasControl: true) == .failure(.noSuchPage(page(Int.max))))
        #expect(r.state.page == page(2))
        #expect(r.state.version == 4)
        #expect(go(&r, .goto(page(6)), ifVersion: nil, by: "a", hasControl: true) == .success(.moved))
    }

    @Test func ifConflict() {
        var r = room(page: 3, version: 8)
        #expect(go(&r, .next, ifVersion: 7, by: "a", hasControl: true) == .failure(.conflict(expected: 7)))
        #expect(go(&r, .next, ifVersion: 9, by: "a", hasControl: true) == .failure(.conflict(expected: 9)))
        #expect(r.state.version == 8)
        #expect(go(&r, .next, ifVersion: 8, by: "a", hasControl: true) == .success(.moved))
        #expect(r.state.version == 9)
    }

    @Test func twoPeoplePressingNextOnTheSameVersionMoveOnce() {
        var r = room(page: 1, version: 7)
        #expect(go(&r, .next, ifVersion: 7, by: "ann", hasControl: true) == .success(.moved))
        #expect(go(&r, .next, ifVersion: 7, by: "bob", hasControl: true) == .failure(.conflict(expected: 7)))
        #expect(r.state.page == page(2))
        #expect(r.state.by == "ann")
    }

    @Test func forbiddenWithoutControl() {
        var r = room(page: 1, version: 2, token: true)
        #expect(go(&r, .next, ifVersion: nil, by: "a", hasControl: false) == .failure(.forbidden))
        #expect(go(&r, .next, ifVersion: nil, by: "a", hasControl: true) == .success(.moved))
        var open = room(page: 1)
        #expect(go(&open, .next, ifVersion: nil, by: "a", hasControl: false) == .success(.moved))
    }

    @Test func checkOrderForbiddenThenConflictThenTarget() {
        // Forbidden beats a wrong IF and an impossible target.
        var r = room(page: 6, version: 2, token: true)
        #expect(go(&r, .goto(page(99)), ifVersion: 1, by: "a", hasControl: false) == .failure(.forbidden))
        #expect(go(&r, .next, ifVersion: 1, by: "a", hasControl: false) == .failure(.forbidden))
        // Conflict beats an impossible target and an unchanged one.
        #expect(go(&r, .goto(page(99)), ifVersion: 1, by: "a", hasControl: true) == .failure(.conflict(expected: 1)))
        #expect(go(&r, .next, ifVersion: 1, by: "a", hasControl: true) == .failure(.conflict(expected: 1)))
        #expect(go(&r, .last, ifVersion: 1, by: "a", hasControl: true) == .failure(.conflict(expected: 1)))
        // Then the target.
        #expect(go(&r, .next, ifVersion: 2, by: "a", hasControl: true) == .failure(.pastEnd(.last)))
        #expect(r.state.version == 2)
    }

    /// The coordinator navigates the room in place and relies on this: every refusal leaves
    /// the whole room (state and policy) as it was.
    @Test(arguments: [
        (room(page: 1, version: 4, token: true), Navigation.next, UInt64?.none, false, NavigationError.forbidden),
        (room(page: 1, version: 4, by: "x"), Navigation.next, UInt64?.some(3), true, NavigationError.conflict(expected: 3)),
        (room(page: 6, version: 4, by: "x"), Navigation.next, UInt64?.none, true, NavigationError.pastEnd(.last)),
        (room(page: 1, version: 4, by: "x"), Navigation.previous, UInt64?.none, true, NavigationError.pastEnd(.first)),
        (room(page: 2, version: 4, by: "x"), Navigation.goto(page(7)), UInt64?.none, true, NavigationError.noSuchPage(page(7))),
        (room(page: 2, version: UInt64.max, by: "x"), Navigation.next, UInt64?.none, true, NavigationError.versionExhausted),
    ])
    func everyRefusalLeavesTheRoomAsItWas(start: Room, nav: Navigation, ifVersion: UInt64?, control: Bool,
                                         error: NavigationError) {
        var r = start
        #expect(go(&r, nav, ifVersion: ifVersion, by: "someone", hasControl: control) == .failure(error))
        #expect(r.state == start.state)
        #expect(r.policy == start.policy)
        #expect(r.name == start.name)
    }

    @Test func versionIsMonotonic() {
        var r = room(page: 1, of: 4, wraps: true)
        var last = r.state.version
        let moves: [Navigation] = [.next, .next, .previous, .last, .first, .goto(page(3)), .next, .next, .previous, .first, .first]
        for move in moves {
            _ = go(&r, move, ifVersion: nil, by: "a", hasControl: true)
            #expect(r.state.version >= last)
            last = r.state.version
            if changed(&r, pageCount: Int(last % 5) + 1, doc: "d\(last)") {
                #expect(r.state.version == last + 1)
            }
            #expect(r.state.version >= last)
            last = r.state.version
        }
    }

    @Test func lastVersionIsReachedThenChangesAreRefused() {
        var r = room(page: 1, version: UInt64.max - 1)
        #expect(r.canChange)
        #expect(go(&r, .next, ifVersion: nil, by: "a", hasControl: true) == .success(.moved))
        #expect(r.state.version == UInt64.max)
        #expect(!r.canChange)
        let atMax = r.state
        for nav in [Navigation.next, .previous, .first, .last, .goto(page(5))] {
            #expect(go(&r, nav, ifVersion: nil, by: "b", hasControl: true) == .failure(.versionExhausted), "\(nav)")
            #expect(r.state == atMax, "a refused change changes nothing")
        }
        #expect(go(&r, .next, ifVersion: UInt64.max, by: "b", hasControl: true) == .failure(.versionExhausted))
    }

    @Test func atTheLastVersionOtherChecksComeFirst() {
        var r = room(page: 2, version: UInt64.max, token: true)
        #expect(go(&r, .next, ifVersion: nil, by: "a", hasControl: false) == .failure(.forbidden))
        #expect(go(&r, .next, ifVersion: 3, by: "a", hasControl: true) == .failure(.conflict(expected: 3)))
        #expect(go(&r, .goto(page(9)), ifVersion: nil, by: "a", hasControl: true) == .failure(.noSuchPage(page(9))))
        #expect(go(&r, .goto(page(2)), ifVersion: nil, by: "a", hasControl: true) == .success(.unchanged), "staying put needs no version")
    }

    @Test func documentChangeAtTheLastVersionIsNotApplied() {
        var r = room(page: 5, version: UInt64.max)
        #expect(!changed(&r, pageCount: 3, doc: "d2"))
        #expect(r.state == RoomState(page: page(5), pageCount: 6, version: UInt64.max, by: nil, doc: "d1"))
    }

    @Test func policyCanChange() {
        var r = room(page: 6)
        r.policy.wraps = true
        #expect(go(&r, .next, ifVersion: nil, by: "a", hasControl: true) == .success(.moved))
        #expect(r.state.page == page(1))
    }

    // MARK: documentChanged

    @Test func documentChangedSameEverythingIsNoChange() {
        var r = room(page: 3, version: 5, by: "ann")
        #expect(!changed(&r, pageCount: 6, doc: "d1"))
        #expect(r.state == RoomState(page: page(3), pageCount: 6, version: 5, by: "ann", doc: "d1"))
    }

    @Test func documentChangedNewDocSameCount() {
        var r = room(page: 3, version: 5, by: "ann")
        #expect(changed(&r, pageCount: 6, doc: "d2"))
        #expect(r.state == RoomState(page: page(3), pageCount: 6, version: 6, by: "ann", doc: "d2"))
    }

    @Test func documentChangedGrowKeepsPage() {
        var r = room(page: 3, version: 5)
        #expect(changed(&r, pageCount: 10, doc: "d1"))
        #expect(r.state.page == page(3))
        #expect(r.state.pageCount == 10)
        #expect(r.state.version == 6)
        #expect(r.state.by == nil)
    }

    @Test func documentChangedShrinkClampsPage() {
        var r = room(page: 5, version: 5, by: "bob")
        #expect(changed(&r, pageCount: 2, doc: "d2"))
        #expect(r.state == RoomState(page: page(2), pageCount: 2, version: 6, by: "bob", doc: "d2"))
        #expect(changed(&r, pageCount: 0, doc: "d2"))
        #expect(r.state.pageCount == 1)
        #expect(r.state.page == page(1))
        #expect(r.state.version == 7)
        #expect(!changed(&r, pageCount: -3, doc: "d2"))
        #expect(r.state.version == 7)
    }

    @Test func documentChangedBumpsOncePerChange() {
        var r = room(page: 6, version: 0)
        #expect(changed(&r, pageCount: 3, doc: "x"))
        #expect(r.state.version == 1)
        #expect(!changed(&r, pageCount: 3, doc: "x"))
        #expect(r.state.version == 1)
    }
}

/// Free-function forms, so mutating calls can sit inside `#expect`.
private func go(_ r: inout Room, _ nav: Navigation, ifVersion: UInt64?, by: String, hasControl: Bool) -> Result<NavigationOutcome, NavigationError> {
    r.navigate(nav, ifVersion: ifVersion, by: by, hasControl: hasControl)
}

private func changed(_ r: inout Room, pageCount: Int, doc: String) -> Bool {
    r.documentChanged(pageCount: pageCount, doc: doc)
}
