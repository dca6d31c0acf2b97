/// Counts downloaded bodies not yet decoded; `waitForRoom` holds a new download back
/// while `limit` of them wait (memory: each is a whole photo). A body smaller than
/// `small` bytes does not count: it holds little, decodes in a few milliseconds, and a
/// run of them would otherwise leave the decode threads waiting for the next downloads
/// while only a couple were kept ahead (the downloads in flight, `--concurrency`, still
/// bound how many wait).
actor Backlog {
    let limit: Int
    let small: Int
    private var held = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int, small: Int = 256 << 10) {
        self.limit = limit
        self.small = small
    }

    func waitForRoom() async {
        while held >= limit {
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    /// A body of `bytes` downloaded; true when it counts (pass that to `remove`).
    func add(bytes: Int) -> Bool {
        guard bytes >= small else { return false }
        held += 1
        return true
    }

    /// Wakes every waiting download while there is room: a small body never calls
    /// `remove`, so waking one per removal would leave the others waiting for good.
    func remove() {
        held -= 1
        guard held < limit else { return }
        let woken = waiters
        waiters.removeAll()
        for waiter in woken { waiter.resume() }
    }
}
