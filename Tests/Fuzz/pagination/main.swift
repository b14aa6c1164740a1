// libFuzzer target: the page indexer. The first byte picks the mode and the chunk size;
// the index must cover the document in order and not depend on the chunking.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPagination(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let selector = data[0]
    let document = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let pagination: Pagination
    switch selector % 5 {
    case 0: pagination = .formFeed
    case 1: pagination = .lines(Int(selector / 5) % 7 + 1)
    case 2: pagination = .separator("---")
    case 3: pagination = .headings
    default: pagination = .separator(String(decoding: document.prefix(Int(selector / 5) % 5), as: UTF8.self))
    }
    if let parsed = Pagination(parsing: pagination.description) { _ = parsed.description }
    _ = Pagination(parsing: String(decoding: document.prefix(40), as: UTF8.self))

    let whole = PageIndexer.index(document, pagination: pagination)
    precondition(whole.count >= 1, "no pages")
    var previousEnd = 0
    for range in whole.ranges {
        precondition(range.lowerBound >= previousEnd && range.upperBound <= document.count, "ranges out of order: \(whole.ranges)")
        previousEnd = range.upperBound
    }
    var chunked = PageIndexer(pagination: pagination)
    let step = Int(selector / 16) + 1
    var offset = 0
    while offset < document.count {
        let end = min(document.count, offset + step)
        document[offset..<end].withUnsafeBytes { chunked.consume($0) }
        offset = end
    }
    precondition(chunked.finish() == whole, "the index depends on the chunking")
    return 0
}
