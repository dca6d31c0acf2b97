import Synchronization

/// Items collected elsewhere (the index's writer), taken on the reading thread.
final class LockedList<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    func append(_ item: Element) { items.withLock { $0.append(item) } }

    func takeAll() -> [Element] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}
