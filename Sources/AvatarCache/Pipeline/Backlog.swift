/// Counts downloaded bodies not yet decoded; `waitForRoom` holds a new download back
/// while `limit` of them wait (memory: each is a whole photo).
actor Backlog {
    let limit: Int
    private var held = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = limit }

    func waitForRoom() async {
        while held >= limit {
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    func add() { held += 1 }

    func remove() {
        held -= 1
        if !waiters.isEmpty { waiters.removeFirst().resume() }
    }
}
