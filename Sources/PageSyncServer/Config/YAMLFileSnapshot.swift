import Configuration
import PageSyncCore

/// A YAML config file as apple/swift-configuration reads it: the ``FileConfigSnapshot``
/// that `FileProvider<YAMLFileSnapshot>` parses a file into.
///
/// It takes the place of the package's own `YAMLSnapshot` (its `YAML` trait), which
/// parses with Yams and so links all of Foundation and ICU's data, about 45 MB of a
/// 62 MB daemon. This one parses with libyaml, the C library Yams bundles, from Debian.
/// Keys nest with dots (`room.slides.file`); a value is read as text, a whole number
/// (``YAMLConfig/int(_:)``), a boolean (``YAMLConfig/bool(_:)``) or a list.
package struct YAMLFileSnapshot: FileConfigSnapshot {
    /// No options: the file says everything.
    package struct ParsingOptions: FileParsingOptions {
        package static var `default`: Self { Self() }
    }

    /// A value asked for as a type it cannot be read as.
    package struct Mismatch: Error, CustomStringConvertible {
        package var key: String
        package var type: ConfigType
        package var description: String { "\(key) cannot be read as \(type.rawValue)" }
    }

    package let providerName: String
    package let values: [String: FlatConfigValue]

    package init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        let root = try data.withUnsafeBytes { bytes throws(YAMLConfigError) in try LibYAMLParser.parse(bytes) }
        self.values = try YAMLConfig.flatten(root)
        self.providerName = providerName
    }

    package func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let name = key.components.joined(separator: ".")
        guard let value = values[name] else { return LookupResult(encodedKey: name, value: nil) }
        guard let content = Self.content(value, as: type) else { throw Mismatch(key: name, type: type) }
        return LookupResult(encodedKey: name, value: ConfigValue(content, isSecret: false))
    }

    /// `value` read as `type`, or nil when it cannot be.
    package static func content(_ value: FlatConfigValue, as type: ConfigType) -> ConfigContent? {
        switch (value, type) {
        case (.scalar(let s), .string): return .string(s)
        case (.scalar(let s), .int): return YAMLConfig.int(s).map(ConfigContent.int)
        case (.scalar(let s), .double): return YAMLConfig.double(s).map(ConfigContent.double)
        case (.scalar(let s), .bool): return YAMLConfig.bool(s).map(ConfigContent.bool)
        case (.list(let l), .stringArray): return .stringArray(l)
        case (.list(let l), .intArray):
            let ints = l.compactMap(YAMLConfig.int)
            return ints.count == l.count ? .intArray(ints) : nil
        case (.list(let l), .doubleArray):
            let doubles = l.compactMap(YAMLConfig.double)
            return doubles.count == l.count ? .doubleArray(doubles) : nil
        case (.list(let l), .boolArray):
            let bools = l.compactMap(YAMLConfig.bool)
            return bools.count == l.count ? .boolArray(bools) : nil
        default: return nil
        }
    }

    package var description: String { "\(providerName)[\(values.count) values]" }

    /// The keys only: values may be tokens or a Redis password.
    package var debugDescription: String {
        "\(providerName)[\(values.count) values: \(values.keys.sorted().joined(separator: ", "))]"
    }
}
