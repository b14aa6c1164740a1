import CYAML
import PageSyncCore

/// Parses YAML with libyaml (Debian's `libyaml-dev`; `libyaml-0-2` at run time) into a
/// ``YAMLNode``. Only the C calls live here: the events go to ``YAMLTreeBuilder`` and what
/// the tree means is ``YAMLConfig``'s.
package enum LibYAMLParser {
    /// The document in `bytes`, or nil for a stream without one (an empty file).
    /// - Throws: ``YAMLConfigError`` with libyaml's problem and its line and column.
    package static func parse(_ bytes: UnsafeRawBufferPointer) throws(YAMLConfigError) -> YAMLNode? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw YAMLConfigError("libyaml could not start (out of memory)") }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_input_string(&parser, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        var builder = YAMLTreeBuilder()
        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else { throw problem(parser) }
            defer { yaml_event_delete(&event) }
            let line = Int(event.start_mark.line) + 1
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return builder.root
            case YAML_DOCUMENT_START_EVENT:
                try builder.startDocument(line: line)
            case YAML_SCALAR_EVENT:
                let s = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: s.value, count: s.length), as: UTF8.self)
                try builder.scalar(text, plain: s.style == YAML_PLAIN_SCALAR_STYLE, anchor: string(s.anchor), line: line)
            case YAML_ALIAS_EVENT:
                try builder.alias(string(event.data.alias.anchor) ?? "", line: line)
            case YAML_SEQUENCE_START_EVENT:
                builder.startSequence(anchor: string(event.data.sequence_start.anchor))
            case YAML_MAPPING_START_EVENT:
                builder.startMapping(anchor: string(event.data.mapping_start.anchor))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                try builder.end(line: line)
            default:
                break
            }
        }
    }

    private static func problem(_ parser: yaml_parser_t) -> YAMLConfigError {
        let what = parser.problem.map { String(cString: $0) } ?? "not valid YAML"
        let mark = parser.problem_mark
        return YAMLConfigError("line \(mark.line + 1), column \(mark.column + 1): \(what)")
    }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
