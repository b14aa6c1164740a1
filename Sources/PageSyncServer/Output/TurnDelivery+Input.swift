import PageSyncCore

/// Phases 1 and 2 of a loop turn: which client's commands are handled now, and which wait
/// (for their output to drain, or for the next turn). (The rules are in TurnDelivery.swift.)
extension TurnDelivery {
    /// Whether `member`, which has used `time` of the loop in this turn, may handle another
    /// command now. If not, its input is paused and the caller stops reading it: it resumes
    /// once its output drains (``writesDrained(_:)``), or, when its budget for the turn is
    /// spent (``TurnBudget``), in the next turn, after other clients' I/O was polled. The web's
    /// members also share one budget per turn (``TurnBudget/webCommands``): however many flood,
    /// a turn spends no more on them, and the paused resume in the order they paused.
    package mutating func mayHandleCommand(_ member: Member, used time: Duration) -> Bool {
        if member.outbox.mustPause(queued: member.queuedOutputMemory, highWater: outputHighWater) {
            member.outbox.state = .paused
            return false
        }
        if member.sharesWebBudget && webRate.isEmpty {
            member.outbox.state = .paused
            waitForWebRate(member)
            return false
        }
        if TurnBudget.spent(commands: member.commandsThisTurn, stagedBytes: member.outbox.stagedBytes, time: time)
            || (member.sharesWebBudget && webCommandsThisTurn >= TurnBudget.webCommands) {
            member.outbox.state = .paused
            queueResume(member)
            return false
        }
        return true
    }

    /// `member` is handling a command: it counts against its budget for this turn (and a web
    /// member's against the web's rate).
    package mutating func commandStarted(_ member: Member) {
        member.commandsThisTurn += 1
        if member.commandsThisTurn == 1 { turnUsers.append(member) }
        if member.sharesWebBudget {
            webCommandsThisTurn += 1
            webRate.take()
        }
    }

    /// A web member waits for the web's rate (after those already waiting).
    private mutating func waitForWebRate(_ member: Member) {
        guard !member.resumeQueued else { return }
        member.resumeQueued = true
        webWaiting.append(member)
        counts.webRateWaits &+= 1
    }

    /// Whether ``refillWebRate(now:)`` has anything to do (the caller reads the clock only then).
    package var webRateNeedsRefill: Bool { !webRate.isFull || !webWaiting.isEmpty }

    /// Before phase 1 of a loop turn: the web's rate earns what it did up to `now`, and as many
    /// members waiting for it as commands may go resume in this turn, in the order they paused
    /// (each one that spends the rest waits again, after the others).
    package mutating func refillWebRate(now: UInt64) {
        webRate.refill(now: now)
        guard !webWaiting.isEmpty, !webRate.isEmpty else { return }
        var moving = webRate.available
        var taken = 0
        for member in webWaiting {
            guard moving > 0 else { break }
            taken += 1
            // One closed meanwhile is dropped here; its flag no longer matters.
            guard member.outbox.state == .paused else {
                member.resumeQueued = false
                continue
            }
            resumeList.append(member)
            moving -= 1
        }
        webWaiting.removeFirst(taken)
    }

    /// Nanoseconds from `now` until a web member waiting for the web's rate may go on; nil
    /// if none waits. The caller makes the loop turn then (a timer), if nothing else does.
    package func webRateWait(now: UInt64) -> UInt64? {
        webWaiting.isEmpty ? nil : webRate.nanosecondsUntilNext(now: now)
    }

    mutating func queueResume(_ member: Member) {
        guard !member.resumeQueued else { return }
        member.resumeQueued = true
        resumeList.append(member)
    }

    /// Phase 1 of a loop turn: the paused clients whose output has drained enough (or whose
    /// budget was spent in the last turn) read on. Their input is open again; the caller
    /// handles what they sent and starts reading them.
    package mutating func takeResumable() -> [Member] {
        guard !resumeList.isEmpty else { return [] }
        var ready: [Member] = []
        for member in resumeList {
            member.resumeQueued = false
            guard member.outbox.state == .paused,
                member.outbox.mayResume(queued: member.queuedOutputMemory, highWater: outputHighWater)
            else { continue }
            member.outbox.state = .open
            ready.append(member)
        }
        resumeList.removeAll(keepingCapacity: true)
        return ready
    }

    /// `member`'s connection wrote everything queued: what waits may go, and paused input
    /// may resume.
    package mutating func writesDrained(_ member: Member) {
        guard member.outbox.state != .closed else { return }
        if !member.outbox.isEmpty { queueFlush(member) }
        if member.outbox.state == .paused { queueResume(member) }
    }
}
