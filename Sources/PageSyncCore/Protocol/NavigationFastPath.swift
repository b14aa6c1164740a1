/// The commands sent on every page turn (`NEXT`, `PREV`, `FIRST`, `LAST`, `GOTO <n>`, each with
/// an optional `IF <version>`) recognised on the line's bytes, without forming a `String`.
///
/// It answers only lines it is sure of: printable ASCII (tabs allowed) of at most
/// ``maxLength`` bytes, a navigation verb in any case, and well-formed arguments. Anything else,
/// every error included, gives nil, and ``CommandParser/parse(_:)`` decides as before. Where it
/// answers, the answer equals the general parser's (the tests compare the two).
package enum NavigationFastPath {
    /// Longer lines go to the general parser. `GOTO <20 digits> IF <20 digits>` fits.
    package static let maxLength = 64

    package static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Command? {
        guard line.count <= maxLength else { return nil }
        // Word boundaries: at most 4 words (verb, page, IF, version).
        var starts: (Int, Int, Int, Int) = (0, 0, 0, 0)
        var ends: (Int, Int, Int, Int) = (0, 0, 0, 0)
        var words = 0
        var i = 0
        let n = line.count
        while i < n {
            let b = line[i]
            if b == 0x20 || b == 0x09 { i += 1; continue }
            guard b > 0x20 && b < 0x7F else { return nil }
            guard words < 4 else { return nil }
            let start = i
            while i < n, line[i] != 0x20, line[i] != 0x09 {
                guard line[i] > 0x20 && line[i] < 0x7F else { return nil }
                i += 1
            }
            switch words {
            case 0: starts.0 = start; ends.0 = i
            case 1: starts.1 = start; ends.1 = i
            case 2: starts.2 = start; ends.2 = i
            default: starts.3 = start; ends.3 = i
            }
            words += 1
        }
        guard words > 0 else { return nil }
        let verb = UnsafeBufferPointer(rebasing: line[starts.0..<ends.0])
        let navigation: Navigation
        var next = 1  // index of the first word after the verb and its page
        if equalsIgnoringCase(verb, "NEXT") {
            navigation = .next
        } else if equalsIgnoringCase(verb, "PREV") {
            navigation = .previous
        } else if equalsIgnoringCase(verb, "FIRST") {
            navigation = .first
        } else if equalsIgnoringCase(verb, "LAST") {
            navigation = .last
        } else if equalsIgnoringCase(verb, "GOTO") {
            guard words >= 2, let n = decimal(UnsafeBufferPointer(rebasing: line[starts.1..<ends.1]), as: Int.self),
                  let page = PageNumber(n) else { return nil }
            navigation = .goto(page)
            next = 2
        } else {
            return nil
        }
        switch words - next {
        case 0:
            return .navigate(navigation, ifVersion: nil)
        case 2:
            let (ifStart, ifEnd, vStart, vEnd) = next == 1 ? (starts.1, ends.1, starts.2, ends.2) : (starts.2, ends.2, starts.3, ends.3)
            guard equalsIgnoringCase(UnsafeBufferPointer(rebasing: line[ifStart..<ifEnd]), "IF"),
                  let version = decimal(UnsafeBufferPointer(rebasing: line[vStart..<vEnd]), as: UInt64.self) else { return nil }
            return .navigate(navigation, ifVersion: version)
        default:
            return nil
        }
    }

    /// ASCII case-insensitive comparison with an upper-case keyword.
    private static func equalsIgnoringCase(_ word: UnsafeBufferPointer<UInt8>, _ keyword: StaticString) -> Bool {
        guard word.count == keyword.utf8CodeUnitCount else { return false }
        return keyword.withUTF8Buffer { k in
            for j in 0..<k.count {
                let b = word[j]
                let upper = (b >= 0x61 && b <= 0x7A) ? b - 0x20 : b
                if upper != k[j] { return false }
            }
            return true
        }
    }

    /// All-digit decimal without overflow, or nil.
    private static func decimal<T: FixedWidthInteger>(_ word: UnsafeBufferPointer<UInt8>, as: T.Type) -> T? {
        guard !word.isEmpty else { return nil }
        var value: T = 0
        for b in word {
            guard b >= 0x30 && b <= 0x39 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(T(b - 0x30))
            if o1 || o2 { return nil }
            value = a
        }
        return value
    }
}
