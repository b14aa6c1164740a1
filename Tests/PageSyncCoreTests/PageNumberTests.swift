import Testing
import PageSyncCore

@Suite struct PageNumberTests {
    @Test func oneBasedNumberAndZeroBasedOffset() {
        let p = PageNumber(3)!
        #expect(p.number == 3)
        #expect(p.offset == 2)
        #expect(PageNumber(offset: 2) == p)
        #expect(p.description == "3")
    }

    @Test(arguments: [0, -1, Int.min])
    func rejectsNumbersBelowOne(_ n: Int) {
        #expect(PageNumber(n) == nil)
    }

    @Test func firstIsPageOne() {
        #expect(PageNumber.first.number == 1)
        #expect(PageNumber.first.offset == 0)
        #expect(PageNumber(1) == .first)
        #expect(PageNumber(Int.max)?.offset == Int.max - 1)
    }

    @Test func ordersByNumber() {
        #expect(PageNumber(1)! < PageNumber(2)!)
        #expect(!(PageNumber(2)! < PageNumber(2)!))
        #expect([PageNumber(3)!, .first, PageNumber(2)!].sorted().map(\.number) == [1, 2, 3])
        #expect(Set([PageNumber(1)!, PageNumber.first]).count == 1)
    }
}
