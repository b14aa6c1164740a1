import PageSyncCore
import Testing

import PageSyncServer

@Suite struct DocumentTests {
    @Test func aFileIsIndexedAndServesEachPage() throws {
        let dir = TempDir()
        let path = dir.write("notes.txt", "one\n\u{0C}\ntwo\n\u{0C}\nthree")
        let doc = try Document.open(.file(path), pagination: .formFeed)
        #expect(doc.pageCount == 3)
        #expect(try doc.text(of: PageNumber(1)!, limit: 100).bytes == Array("one\n".utf8))
        #expect(try doc.text(of: PageNumber(3)!, limit: 100).bytes == Array("three".utf8))
    }

    @Test func textIsCutAtTheLimit() throws {
        let dir = TempDir()
        let path = dir.write("big.txt", String(repeating: "x", count: 1000))
        let doc = try Document.open(.file(path), pagination: .formFeed)
        let text = try doc.text(of: .first, limit: 10)
        #expect(text.bytes.count == 10)
        #expect(text.pageByteCount == 1000)
        #expect(text.truncated)
    }

    @Test func theIdChangesWhenTheFileChanges() throws {
        let dir = TempDir()
        let path = dir.write("a.txt", "one")
        let first = try Document.open(.file(path), pagination: .formFeed)
        dir.write("a.txt", "one\u{0C}two")
        let second = try Document.open(.file(path), pagination: .formFeed)
        #expect(first.id != second.id)
        #expect(second.pageCount == 2)
        // The old document still serves the content it indexed.
        #expect(try first.text(of: .first, limit: 100).bytes.count <= 3)
    }

    @Test func theBuiltinGuideHasSeveralPages() throws {
        let doc = try Document.open(.builtinGuide, pagination: .formFeed)
        #expect(doc.pageCount == BuiltinGuide.pages(address: ServerConfig.defaultListen).count)
        let first = try doc.text(of: .first, limit: 1 << 20)
        #expect(String(decoding: first.bytes, as: UTF8.self).contains("pagesync"))
    }

    @Test func missingAndNonRegularFilesAreOneLineErrors() {
        let dir = TempDir()
        #expect(throws: DocumentError.self) { try Document.open(.file(dir.path + "/nope.txt"), pagination: .formFeed) }
        do {
            _ = try Document.open(.file(dir.path), pagination: .formFeed)
            Issue.record("a directory must not open as a document")
        } catch {
            #expect(error.description.contains("not a regular file"))
        }
    }
}

@Suite struct BuiltinGuideAddressTests {
    @Test func theGuideNamesTheAddressItIsGiven() throws {
        let doc = try Document.open(.builtinGuide, pagination: .formFeed, guideAddress: ListenAddress(host: "10.1.2.3", port: 9123))
        var all = ""
        for n in 1...doc.pageCount {
            all += String(decoding: try doc.text(of: PageNumber(clamping: n, pageCount: doc.pageCount), limit: 1 << 20).bytes, as: UTF8.self)
        }
        #expect(all.contains("nc -q1 10.1.2.3 9123"))
        #expect(all.contains("--listen 10.1.2.3:9123"))
        #expect(!all.contains("7777"))
        #expect(BuiltinGuide.reachable(ListenAddress(host: "0.0.0.0", port: 1)) == ListenAddress(host: "127.0.0.1", port: 1))
        #expect(BuiltinGuide.reachable(ListenAddress(host: "::", port: 1)) == ListenAddress(host: "::1", port: 1))
    }
}
