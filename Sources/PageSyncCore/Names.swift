/// Names of rooms and clients: 1...32 characters of `[A-Za-z0-9._-]`, case-sensitive.
public enum Names {
    /// The longest valid name, in characters.
    public static let maxLength = 32

    /// True iff `name` is 1...32 characters, each one of `A-Z a-z 0-9 . _ -`.
    public static func isValid(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard !utf8.isEmpty && utf8.count <= maxLength else { return false }
        return utf8.allSatisfy(isNameByte)
    }

    /// A valid room name derived from a file path: the last path component without its
    /// extension, every invalid character replaced by `-`, truncated to 32 characters;
    /// `"room"` when nothing is left.
    ///
    /// `"notes.txt"` -> `"notes"`, `"/a/b/My Deck.md"` -> `"My-Deck"`.
    public static func roomName(forFile path: String) -> String {
        var component = Substring(path)
        while component.last == "/" { component = component.dropLast() }
        if let slash = component.lastIndex(of: "/") {
            component = component[component.index(after: slash)...]
        }
        if let dot = component.lastIndex(of: "."), dot != component.startIndex {
            component = component[..<dot]
        }
        var result = ""
        for character in component {
            if character.utf8.count == 1, let byte = character.utf8.first, isNameByte(byte) {
                result.append(character)
            } else {
                result.append("-")
            }
            if result.count == maxLength { break }
        }
        return result.isEmpty ? "room" : result
    }

    static func isNameByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
