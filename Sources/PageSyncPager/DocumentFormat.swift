import PageSyncCore

/// How the pager shows a document's text: `--markdown`, `--plain`, or by the document's name.
public enum MarkdownChoice: Equatable, Sendable {
    /// By the name the server gives (`file=` in `HELLO`): `.md` and `.markdown` are markdown.
    case auto
    /// `--markdown`: every document is rendered as markdown.
    case always
    /// `--plain`: every document is shown as its text.
    case never

    /// Whether a document named `file` (percent-encoded, as on the wire; nil when the server
    /// did not say) is rendered as markdown.
    public func rendersMarkdown(file: String?) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .auto: return DocumentSource.isMarkdownName(file)
        }
    }
}
