/// Counts downloaded bodies not yet decoded; `waitForRoom` holds a new download back
/// while `limit` of them wait (memory: each is a whole photo). Bodies smaller than
/// `small` bytes are counted apart, against `smallLimit` (8 times `limit` unless told):
/// each holds little and decodes in a few milliseconds, and counted with the large ones
/// a run of them left the decode threads waiting for the next downloads while only a
/// couple were kept ahead.
actor Backlog {
    /// Which count a body is in.
    enum Hold: Sendable { case large, small }

    let limit: Int
    let small: Int
    let smallLimit: Int
    private var held = 0
    private var smallHeld = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int, small: Int = 256 << 10, smallLimit: Int? = nil) {
        self.limit = limit
        self.small = small
        self.smallLimit = smallLimit ?? 8 * limit
    }

    private var hasRoom: Bool { held < limit && smallHeld < smallLimit }

    func waitForRoom() async {
        while !hasRoom {
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    /// A body of `bytes` downloaded; pass what it returns to `remove` once it is decoded.
    func add(bytes: Int) -> Hold {
        if bytes < small {
            smallHeld += 1
            return .small
        }
        held += 1
        return .large
    }

    /// Wakes every waiting download while there is room (each looks again): a small
    /// body's removal may make room that a large one's wait was not woken for.
    func remove(_ hold: Hold) {
        switch hold {
        case .large: held -= 1
        case .small: smallHeld -= 1
        }
        guard hasRoom else { return }
        let woken = waiters
        waiters.removeAll()
        for waiter in woken { waiter.resume() }
    }
}
