/// Sample documents for the tests.
enum Documents {
    /// A document of `count` pages separated by form feeds; page `n` reads "<prefix> page n".
    static func formFeed(pages count: Int, prefix: String = "this is") -> String {
        (1...count).map { "\(prefix) page \($0)\n" }.joined(separator: "\u{0C}\n")
    }
}
