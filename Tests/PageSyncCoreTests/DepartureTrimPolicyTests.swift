import PageSyncCore
import Testing

@Suite("Heap trim after clients leave")
struct DepartureTrimPolicyTests {
    private static let mib = 1 << 20

    @Test func theFirstReportIsTheBaseline() {
        var policy = DepartureTrimPolicy()
        #expect(policy.minimumGrowthBytes == 16 * Self.mib)
        #expect(policy.minimumIntervalMilliseconds == 10_000)
        let first = policy.shouldTrim(resident: 100 * Self.mib, clients: 0, now: 0)
        #expect(!first, "nothing to compare with yet")
        #expect(policy.baselineBytes == 100 * Self.mib)
    }

    @Test func clientsThatCameBeforeTheFirstReportCountFromTheStartingBaseline() {
        var policy = DepartureTrimPolicy()
        policy.begin(resident: 17 * Self.mib)
        let busy = policy.shouldTrim(resident: 74 * Self.mib, clients: 60, now: 2_000)
        #expect(!busy)
        let gone = policy.shouldTrim(resident: 66 * Self.mib, clients: 0, now: 4_000)
        #expect(gone, "66 MiB against the 17 MiB the daemon started with")
    }

    @Test func aBurstBetweenTwoReportsCounts() {
        var policy = DepartureTrimPolicy()
        policy.begin(resident: 17 * Self.mib)
        for n in 1...61 { policy.clientConnected(clients: n) }
        // All but one left before the first report.
        let gone = policy.shouldTrim(resident: 74 * Self.mib, clients: 1, now: 2_000)
        #expect(gone)
        #expect(policy.peakClients == 61)
    }

    @Test func clientsThatCameAndWentAfterGrowthAreWorthATrim() {
        var policy = DepartureTrimPolicy()
        _ = policy.shouldTrim(resident: 17 * Self.mib, clients: 0, now: 0)
        let busy = policy.shouldTrim(resident: 52 * Self.mib, clients: 50, now: 2_000)
        #expect(!busy, "the memory is the clients' own while they are here")
        let gone = policy.shouldTrim(resident: 52 * Self.mib, clients: 0, now: 4_000)
        #expect(gone)
        policy.trimmed(resident: 18 * Self.mib, clients: 0)
        #expect(policy.baselineBytes == 18 * Self.mib && policy.peakClients == 0)
        let again = policy.shouldTrim(resident: 18 * Self.mib, clients: 0, now: 30_000)
        #expect(!again, "nothing grew since the trim")
    }

    @Test func halfTheClientsLeavingIsEnoughAndFewerIsNot() {
        var policy = DepartureTrimPolicy()
        _ = policy.shouldTrim(resident: 10 * Self.mib, clients: 0, now: 0)
        _ = policy.shouldTrim(resident: 60 * Self.mib, clients: 1000, now: 2_000)
        let most = policy.shouldTrim(resident: 60 * Self.mib, clients: 501, now: 4_000)
        #expect(!most)
        let half = policy.shouldTrim(resident: 60 * Self.mib, clients: 500, now: 6_000)
        #expect(half)
    }

    @Test func smallGrowthIsNotWorthATrim() {
        var policy = DepartureTrimPolicy(minimumGrowthBytes: 16 * Self.mib, minimumIntervalMilliseconds: 0)
        _ = policy.shouldTrim(resident: 20 * Self.mib, clients: 10, now: 0)
        let small = policy.shouldTrim(resident: 20 * Self.mib + 16 * Self.mib - 1, clients: 0, now: 1)
        #expect(!small)
        let enough = policy.shouldTrim(resident: 36 * Self.mib, clients: 0, now: 2)
        #expect(enough)
    }

    @Test func aLowerReportLowersTheBaseline() {
        var policy = DepartureTrimPolicy(minimumGrowthBytes: 16 * Self.mib, minimumIntervalMilliseconds: 0)
        _ = policy.shouldTrim(resident: 40 * Self.mib, clients: 5, now: 0)
        _ = policy.shouldTrim(resident: 20 * Self.mib, clients: 5, now: 1)
        #expect(policy.baselineBytes == 20 * Self.mib)
        let grew = policy.shouldTrim(resident: 37 * Self.mib, clients: 0, now: 2)
        #expect(grew, "17 MiB over the lowered baseline, and the clients left")
    }

    @Test func trimsAreAtLeastTheIntervalApartAndABackwardClockWaits() {
        var policy = DepartureTrimPolicy(minimumGrowthBytes: Self.mib, minimumIntervalMilliseconds: 10_000)
        _ = policy.shouldTrim(resident: 10 * Self.mib, clients: 4, now: 0)
        let first = policy.shouldTrim(resident: 20 * Self.mib, clients: 0, now: 1_000)
        #expect(first)
        policy.trimmed(resident: 19 * Self.mib, clients: 0)
        _ = policy.shouldTrim(resident: 40 * Self.mib, clients: 8, now: 2_000)
        let soon = policy.shouldTrim(resident: 40 * Self.mib, clients: 0, now: 10_999)
        #expect(!soon)
        let backwards = policy.shouldTrim(resident: 40 * Self.mib, clients: 0, now: 500)
        #expect(!backwards)
        let later = policy.shouldTrim(resident: 40 * Self.mib, clients: 0, now: 11_000)
        #expect(later)
    }
}
