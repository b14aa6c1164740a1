/// A parsed YAML document, as far as a config file needs one: scalars (kept as their text),
/// sequences and mappings. The parser (libyaml, in the daemon's shell) builds it; everything
/// decided about it (dotted keys, lists, what a number or a boolean is) is here, without C.
public indirect enum YAMLNode: Equatable, Sendable {
    /// A scalar's text. `plain` is false for a quoted or block scalar: `"60"` is text that
    /// happens to be digits, `~` in quotes is not null.
    case scalar(String, plain: Bool)
    /// A sequence, in order.
    case sequence([YAMLNode])
    /// A mapping, in file order. Keys are scalars; the parser refuses any other key.
    case mapping([YAMLEntry])
}

/// One key and its value in a ``YAMLNode/mapping(_:)``.
public struct YAMLEntry: Equatable, Sendable {
    /// The key's text.
    public var key: String
    /// The value.
    public var value: YAMLNode

    /// An entry.
    public init(key: String, value: YAMLNode) {
        self.key = key
        self.value = value
    }
}

/// A config file's values under dotted keys (`room.slides.file`), each one scalar or a list
/// of scalars: the shape apple/swift-configuration reads.
public enum FlatConfigValue: Equatable, Sendable {
    /// One value.
    case scalar(String)
    /// A list of values (a YAML sequence of scalars).
    case list([String])
}

/// Why a YAML document is not a config file.
public struct YAMLConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One line naming the key, when there is one.
    public var description: String

    /// An error with `description`.
    public init(_ description: String) { self.description = description }
}

/// The rules that turn a ``YAMLNode`` into dotted keys and read its scalars as numbers and
/// booleans.
public enum YAMLConfig {
    /// Flattens a document: nested mappings become dotted keys, a sequence of scalars a
    /// list. A null value (`~`, `null`, or nothing after the colon) leaves its key unset.
    /// `nil` (an empty file, or only comments) gives no values.
    /// - Throws: ``YAMLConfigError`` when the top level is not a mapping, a key repeats, a
    ///   key holds a dot, or a list holds anything but scalars.
    public static func flatten(_ root: YAMLNode?) throws(YAMLConfigError) -> [String: FlatConfigValue] {
        guard let root else { return [:] }
        guard case .mapping(let entries) = root else {
            throw YAMLConfigError("the top level is not a mapping of keys to values")
        }
        var out: [String: FlatConfigValue] = [:]
        try flatten(entries, prefix: "", into: &out)
        return out
    }

    private static func flatten(_ entries: [YAMLEntry], prefix: String, into out: inout [String: FlatConfigValue]) throws(YAMLConfigError) {
        var seen = Set<String>()
        for entry in entries {
            let key = prefix + entry.key
            guard !entry.key.isEmpty else { throw YAMLConfigError("\(prefix.isEmpty ? "the top level" : String(prefix.dropLast())): an empty key") }
            guard !entry.key.contains(".") else { throw YAMLConfigError("\(key): a key may not contain a dot; nest it instead") }
            guard seen.insert(entry.key).inserted else { throw YAMLConfigError("\(key): the key appears twice") }
            switch entry.value {
            case .scalar(let text, let plain):
                if plain && isNull(text) { continue }
                out[key] = .scalar(text)
            case .sequence(let items):
                var list: [String] = []
                for (index, item) in items.enumerated() {
                    guard case .scalar(let text, _) = item else {
                        throw YAMLConfigError("\(key): item \(index + 1) of the list is not a single value")
                    }
                    list.append(text)
                }
                out[key] = .list(list)
            case .mapping(let nested):
                try flatten(nested, prefix: key + ".", into: &out)
            }
        }
    }

    /// YAML's null: nothing, `~`, or `null` in any of its three spellings.
    static func isNull(_ text: String) -> Bool {
        text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }

    /// A scalar as a whole number: decimal with an optional sign, `0x` hexadecimal or `0o`
    /// octal, with `_` allowed between digits (YAML 1.1 and 1.2 agree on these).
    public static func int(_ text: String) -> Int? {
        var digits = Substring(text)
        var negative = false
        if let first = digits.first, first == "-" || first == "+" {
            negative = first == "-"
            digits = digits.dropFirst()
        }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        } else if digits.hasPrefix("0o") || digits.hasPrefix("0O") {
            radix = 8
            digits = digits.dropFirst(2)
        }
        guard let first = digits.first, first != "_", digits.last != "_" else { return nil }
        let cleaned = digits.filter { $0 != "_" }
        guard let magnitude = UInt64(cleaned, radix: radix) else { return nil }
        if negative {
            guard magnitude <= UInt64(Int.max) + 1 else { return nil }
            return magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude)
        }
        guard magnitude <= UInt64(Int.max) else { return nil }
        return Int(magnitude)
    }

    /// A scalar as a boolean: `true`/`false` and YAML 1.1's `yes`/`no`/`on`/`off`, each
    /// in lower case, Capitalised or UPPER CASE.
    public static func bool(_ text: String) -> Bool? {
        switch text {
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": true
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": false
        default: nil
        }
    }

    /// A scalar as a floating-point number (`1.5`, `-2e3`, `.inf`, `.nan`).
    public static func double(_ text: String) -> Double? {
        switch text {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
        case "-.inf", "-.Inf", "-.INF": return -.infinity
        case ".nan", ".NaN", ".NAN": return .nan
        default:
            if let n = int(text) { return Double(n) }
            return Double(text.filter { $0 != "_" })
        }
    }
}

/// Builds a ``YAMLNode`` from a YAML parser's events (libyaml's, in the daemon): collections
/// opened and closed, scalars, anchors and aliases. Pure, so every shape is unit-tested
/// without the C library.
public struct YAMLTreeBuilder: Sendable {
    private enum Open: Sendable {
        case sequence([YAMLNode], anchor: String?)
        case mapping([YAMLEntry], key: String?, anchor: String?)
    }

    /// The document once it is complete (nil before, and for an empty stream).
    public private(set) var root: YAMLNode?
    private var stack: [Open] = []
    private var anchors: [String: YAMLNode] = [:]
    private var documents = 0

    /// An empty builder.
    public init() {}

    /// A document starts. A second one is refused: a config file is one document.
    public mutating func startDocument(line: Int) throws(YAMLConfigError) {
        documents += 1
        if documents > 1 { throw YAMLConfigError("line \(line): the file holds more than one YAML document") }
    }

    /// A scalar, with its anchor (`&name`) if it has one.
    public mutating func scalar(_ text: String, plain: Bool, anchor: String?, line: Int) throws(YAMLConfigError) {
        try add(.scalar(text, plain: plain), anchor: anchor, line: line)
    }

    /// An alias (`*name`): a copy of the node anchored under that name.
    public mutating func alias(_ name: String, line: Int) throws(YAMLConfigError) {
        guard let node = anchors[name] else { throw YAMLConfigError("line \(line): *\(name) names no anchor before it") }
        try add(node, anchor: nil, line: line)
    }

    /// A sequence opens.
    public mutating func startSequence(anchor: String?) {
        stack.append(.sequence([], anchor: anchor))
    }

    /// A mapping opens.
    public mutating func startMapping(anchor: String?) {
        stack.append(.mapping([], key: nil, anchor: anchor))
    }

    /// The innermost open collection ends.
    public mutating func end(line: Int) throws(YAMLConfigError) {
        guard let open = stack.popLast() else { throw YAMLConfigError("line \(line): an end with nothing open") }
        switch open {
        case .sequence(let items, let anchor):
            try add(.sequence(items), anchor: anchor, line: line)
        case .mapping(let entries, let key, let anchor):
            if let key { throw YAMLConfigError("line \(line): \(key) has no value") }
            try add(.mapping(entries), anchor: anchor, line: line)
        }
    }

    private mutating func add(_ node: YAMLNode, anchor: String?, line: Int) throws(YAMLConfigError) {
        if let anchor { anchors[anchor] = node }
        guard let top = stack.popLast() else {
            root = node
            return
        }
        switch top {
        case .sequence(var items, let a):
            items.append(node)
            stack.append(.sequence(items, anchor: a))
        case .mapping(var entries, let key?, let a):
            entries.append(YAMLEntry(key: key, value: node))
            stack.append(.mapping(entries, key: nil, anchor: a))
        case .mapping(let entries, nil, let a):
            guard case .scalar(let text, _) = node else {
                throw YAMLConfigError("line \(line): a key must be a single value, not a list or a mapping")
            }
            stack.append(.mapping(entries, key: text, anchor: a))
        }
    }
}
