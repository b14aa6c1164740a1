import PageSyncCore
import Testing

@Suite("Heap trim after handshake bursts")
struct HeapTrimPolicyTests {
    @Test func fewHandshakesAreNotWorthATrim() {
        var policy = HeapTrimPolicy(minimumHandshakes: 3, minimumIntervalMilliseconds: 1000)
        policy.handshakeBegan()
        policy.handshakeBegan()
        let trimmed10000 = policy.shouldTrim(now: 10_000)
        #expect(!trimmed10000)
        #expect(policy.handshakesSinceTrim == 2, "a refusal keeps the count")
        policy.handshakeBegan()
        let trimmedAtThird = policy.shouldTrim(now: 10_000)
        #expect(trimmedAtThird)
        #expect(policy.handshakesSinceTrim == 0)
    }

    @Test func aTrimIsOnlyWorthItOncePerBurst() {
        var policy = HeapTrimPolicy(minimumHandshakes: 1, minimumIntervalMilliseconds: 1000)
        policy.handshakeBegan()
        let trimmed5000 = policy.shouldTrim(now: 5000)
        #expect(trimmed5000)
        let trimmed9000 = policy.shouldTrim(now: 9000)
        #expect(!trimmed9000, "no handshake since the last trim")
    }

    @Test func trimsAreAtLeastTheIntervalApart() {
        var policy = HeapTrimPolicy(minimumHandshakes: 1, minimumIntervalMilliseconds: 1000)
        policy.handshakeBegan()
        let trimmed5000 = policy.shouldTrim(now: 5000)
        #expect(trimmed5000)
        policy.handshakeBegan()
        let trimmed5999 = policy.shouldTrim(now: 5999)
        #expect(!trimmed5999)
        #expect(policy.handshakesSinceTrim == 1)
        let trimmed6000 = policy.shouldTrim(now: 6000)
        #expect(trimmed6000)
    }

    @Test func aClockThatWentBackwardsWaits() {
        var policy = HeapTrimPolicy(minimumHandshakes: 1, minimumIntervalMilliseconds: 1000)
        policy.handshakeBegan()
        let trimmed5000 = policy.shouldTrim(now: 5000)
        #expect(trimmed5000)
        policy.handshakeBegan()
        let trimmed4000 = policy.shouldTrim(now: 4000)
        #expect(!trimmed4000)
    }

    @Test func theFirstTrimNeedsNoInterval() {
        var policy = HeapTrimPolicy()
        #expect(policy.minimumHandshakes == 64)
        #expect(policy.minimumIntervalMilliseconds == 1000)
        for _ in 0..<64 { policy.handshakeBegan() }
        let trimmed0 = policy.shouldTrim(now: 0)
        #expect(trimmed0)
    }
}
