import CAllocator
import Foundation
import NIOCore
import Synchronization

/// At most `maximum` open connections. At the limit a new connection makes room by closing the
/// connection idle the longest (one with no request in hand: a keep-alive connection, or one that
/// never sent a whole request head), as nginx reuses its idle keep-alive connections; only when
/// every connection has a request in hand is the new one closed. So a flood of idle or half-open
/// connections cannot keep a phone out, and `accept` never meets the file-descriptor limit.
///
/// When the connections fall to a quarter of their peak, the C allocator is asked to return its
/// free pages, so that memory taken by a burst goes back to the system after it.
final class ConnectionLimit: Sendable {
    /// Descriptors kept for files, the manifest and the listening socket.
    static let reservedDescriptors = 256

    let maximum: Int
    private let state = Mutex(State())

    private struct State {
        struct Entry {
            let channel: any Channel
            var requestsInHand = 0
            /// Its place in `idleOrder` since it last became idle.
            var idleSince: UInt64
        }

        var entries: [ObjectIdentifier: Entry] = [:]
        /// Connections in the order they became idle; stale places are skipped.
        var idleOrder: [(id: ObjectIdentifier, since: UInt64)] = []
        var next = 0
        var clock: UInt64 = 0
        var peak = 0
        var closedToMakeRoom = 0

        mutating func becameIdle(_ id: ObjectIdentifier) {
            clock += 1
            entries[id]?.idleSince = clock
            idleOrder.append((id, clock))
            if idleOrder.count - next > 2 * entries.count + 1024 {
                idleOrder = idleOrder[next...].filter { entries[$0.id]?.idleSince == $0.since && entries[$0.id]?.requestsInHand == 0 }
                next = 0
            }
        }

        mutating func removeLongestIdle() -> (any Channel)? {
            while next < idleOrder.count {
                let (id, since) = idleOrder[next]
                next += 1
                if let entry = entries[id], entry.requestsInHand == 0, entry.idleSince == since {
                    entries[id] = nil
                    return entry.channel
                }
            }
            return nil
        }
    }

    /// `requested`, lowered to what the process's descriptor limit allows.
    init(requested: Int, descriptorLimit: Int) {
        maximum = max(1, min(requested, descriptorLimit - Self.reservedDescriptors))
    }

    /// Raises the soft descriptor limit to the hard one (the soft one is often 1,024) and returns it.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    var count: Int { state.withLock { $0.entries.count } }
    var closedToMakeRoom: Int { state.withLock { $0.closedToMakeRoom } }

    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let evicted: (any Channel)? = state.withLock { state in
            state.entries[id] = .init(channel: channel, idleSince: 0)
            state.becameIdle(id)
            state.peak = max(state.peak, state.entries.count)
            guard state.entries.count > maximum else { return nil }
            state.closedToMakeRoom += 1
            return state.removeLongestIdle() ?? channel
        }
        evicted?.close(promise: nil)
        channel.closeFuture.whenComplete { [self] _ in closed(id) }
    }

    func requestStarted(_ channel: any Channel) {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.requestsInHand += 1 }
    }

    func requestFinished(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { state in
            guard let held = state.entries[id]?.requestsInHand, held > 0 else { return }
            state.entries[id]?.requestsInHand = held - 1
            if held == 1 { state.becameIdle(id) }
        }
    }

    private func closed(_ id: ObjectIdentifier) {
        let trims: Bool = state.withLock { state in
            state.entries[id] = nil
            guard state.peak >= 64, state.entries.count <= state.peak / 4 else { return false }
            state.peak = state.entries.count
            return true
        }
        if trims { Self.returnFreeMemory() }
    }

    static func returnFreeMemory() {
        DispatchQueue.global(qos: .utility).async { station_return_free_memory() }
    }
}
