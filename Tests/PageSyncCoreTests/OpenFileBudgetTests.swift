import Testing
import PageSyncCore

@Suite struct OpenFileBudgetTests {
    @Test func aLimitWithRoomForEveryClientAndTheReserveChangesNothing() {
        #expect(OpenFileBudget.fit(maxClients: 10_000, openFileLimit: 20_000, rooms: 1) == .init(maxClients: 10_000, warning: nil))
        #expect(OpenFileBudget.fit(maxClients: 96, openFileLimit: 130, rooms: 1) == .init(maxClients: 96, warning: nil), "exactly enough")
        #expect(OpenFileBudget.fit(maxClients: 10_000, openFileLimit: nil, rooms: 1) == .init(maxClients: 10_000, warning: nil), "unlimited")
    }

    @Test func aLowLimitCapsTheClientsAndSaysWhy() {
        let fit = OpenFileBudget.fit(maxClients: 10_000, openFileLimit: 128, rooms: 0)
        #expect(fit.maxClients == 128 - OpenFileBudget.reserved)
        #expect(fit.warning == "max-clients 10000 needs 10032 open files, but the limit is 128: serving at most 96 client(s) (raise LimitNOFILE= or ulimit -n)")
        #expect(OpenFileBudget.fit(maxClients: 97, openFileLimit: 128, rooms: 0).maxClients == 96, "one short")
    }

    @Test func eachRoomKeepsTwoDescriptorsForItsDocument() {
        let fit = OpenFileBudget.fit(maxClients: 10_000, openFileLimit: 128, rooms: 40)
        #expect(fit.maxClients == 128 - 32 - 80)
        #expect(fit.warning == "max-clients 10000 needs 10112 open files, but the limit is 128: serving at most 16 client(s) (raise LimitNOFILE= or ulimit -n)")
    }

    @Test func aLimitBelowTheReserveStillAdmitsOneClient() {
        #expect(OpenFileBudget.fit(maxClients: 10, openFileLimit: 20, rooms: 1).maxClients == 1)
        // The metrics listener's 65 descriptors: 200 - 32 - 2 - 65 = 101.
        #expect(OpenFileBudget.fit(maxClients: 10_000, openFileLimit: 200, rooms: 1, extra: 65).maxClients == 101)
        #expect(OpenFileBudget.fit(maxClients: 10, openFileLimit: 0, rooms: 0).maxClients == 1)
        #expect(OpenFileBudget.fit(maxClients: 10, openFileLimit: 64, rooms: 100).maxClients == 1)
    }
}
