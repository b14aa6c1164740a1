import PageSyncCore

/// The pure rules by which server lines change the pager's ``RoomView`` (see ``PagerModel`` for
/// when each applies).
package enum RoomUpdates {
    /// A complete view from a `HELLO` or `OK JOIN` line, or nil if fields are missing.
    package static func fullView(_ line: WireLine, control: Bool) -> RoomView? {
        guard let name = line.fields["room"], let page = line.int("page"), let pages = line.int("pages"),
              let version = line.version, pages >= 1 else { return nil }
        let by = line.by ?? nil
        var view = RoomView(name: String(name), page: min(max(1, page), pages), pageCount: pages, version: version,
                            epoch: line.fields["epoch"] ?? "", by: by, doc: line.fields["doc"] ?? "", wraps: line.yesNo("wrap") ?? false,
                            control: control, file: line.fields["file"], title: line.fields["title"].map(WireText.percentDecoded))
        view.line = line.line ?? 1
        view.mark = line.mark ?? nil
        return view
    }

    /// `room` after a versioned line (`PAGE`, navigation `OK`, `ERR 409/416`): newer replaces, equal fills
    /// in, older is ignored. A line from another epoch is a reset: its state is taken whatever its version.
    /// Nil when the line is about another room (nothing changes).
    package static func reconciled(_ room: RoomView, with line: WireLine) -> RoomView? {
        var r = room
        if let name = line.fields["room"], name != r.name { return nil }  // another room's news
        if let control = line.yesNo("control") { r.control = control }
        if let wraps = line.yesNo("wrap") { r.wraps = wraps }
        let newEpoch = line.fields["epoch"].map { $0 != r.epoch } ?? false
        if let v = line.version, v >= r.version || newEpoch {
            if v > r.version || newEpoch, let page = line.int("page"), let pages = line.int("pages"), pages >= 1 {
                r.version = v
                if let epoch = line.fields["epoch"] { r.epoch = epoch }
                r.pageCount = pages
                r.page = min(max(1, page), pages)
                if let by = line.by { r.by = by }
                if let doc = line.fields["doc"] { r.doc = doc }
                r.line = line.line ?? 1  // every versioned line carries the focus; none from an older daemon
                r.mark = line.mark ?? nil
            } else if v == r.version {
                if let by = line.by { r.by = by }
                if let doc = line.fields["doc"] { r.doc = doc }
            }
        }
        return r
    }
}
