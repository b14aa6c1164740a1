/// Compares two byte sequences in time that depends only on their lengths, never on
/// where they first differ. Use it to check secrets such as room tokens.
/// Returns true iff both hold the same bytes in the same order.
public func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    let x = Array(a)
    let y = Array(b)
    var difference: UInt = x.count == y.count ? 0 : 1
    let n = max(x.count, y.count)
    var i = 0
    while i < n {
        let p: UInt8 = i < x.count ? x[i] : 0
        let q: UInt8 = i < y.count ? y[i] : 0
        difference |= UInt(p ^ q)
        i += 1
    }
    return difference == 0
}
