import Foundation

/// Items collected elsewhere (the index's writer), taken on the reading thread.
final class LockedList<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []

    func append(_ item: Element) { lock.withLock { items.append(item) } }

    func takeAll() -> [Element] {
        lock.withLock {
            defer { items.removeAll() }
            return items
        }
    }
}
