import Testing

import PageSyncServer

@Suite struct TurnBudgetTests {
    @Test func aClientGoesOnWhileEveryPartOfItsBudgetLasts() {
        #expect(!TurnBudget.spent(commands: 0, stagedBytes: 0, time: .zero))
        #expect(!TurnBudget.spent(commands: TurnBudget.commands - 1, stagedBytes: TurnBudget.bytes - 1, time: .microseconds(999)))
    }

    @Test func commandsBytesOrTimeEachEndTheTurn() {
        #expect(TurnBudget.spent(commands: TurnBudget.commands, stagedBytes: 0, time: .zero))
        #expect(TurnBudget.spent(commands: 1, stagedBytes: TurnBudget.bytes, time: .zero))
        #expect(TurnBudget.spent(commands: 1, stagedBytes: 0, time: TurnBudget.time))
        #expect(TurnBudget.spent(commands: 1, stagedBytes: 0, time: .seconds(1)))
    }

    @Test func theFirstCommandOfATurnAlwaysRuns() {
        // Time left over from reading or streaming never starves a client of its first command.
        #expect(!TurnBudget.spent(commands: 0, stagedBytes: 0, time: .seconds(1)))
    }
}
