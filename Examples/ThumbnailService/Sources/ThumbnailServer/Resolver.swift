#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Name resolution with the system resolver (`getaddrinfo`), off Swift's cooperative threads.
enum Resolver {
    private static let queue = DispatchQueue(label: "resolver", attributes: .concurrent)

    struct Failure: Error { var reason: String }

    static func addresses(of host: String) async throws(Failure) -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        let result: Result<[IPAddress], Failure> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: resolve(host)) }
        }
        return try result.get()
    }

    private static func resolve(_ host: String) -> Result<[IPAddress], Failure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            return .failure(Failure(reason: "\(host) does not resolve: \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            if let socketAddress = info.pointee.ai_addr {
                switch Int32(info.pointee.ai_family) {
                case AF_INET:
                    socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        var address = pointer.pointee.sin_addr
                        if let ip = IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) }) { addresses.append(ip) }
                    }
                case AF_INET6:
                    socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        var address = pointer.pointee.sin6_addr
                        if let ip = IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) }) { addresses.append(ip) }
                    }
                default:
                    break
                }
            }
            entry = info.pointee.ai_next
        }
        var seen: Set<IPAddress> = []
        return .success(addresses.filter { seen.insert($0).inserted })
    }
}
