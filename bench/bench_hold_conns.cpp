// hold_conns CONNINFO N: opens N connections and holds them, so the sampler
// has N backends to look at. One process instead of N psql clients keeps the
// client side cheap on a 2-core machine.
// Prints "ready N" once connected, then obeys lines on stdin:
//   busy SECONDS   every connection starts SELECT pg_sleep(SECONDS) (active,
//                  waiting: the sampler's worst case, every backend sampled)
//   quit / EOF     closes everything (backends still sleeping exit through
//                  client_connection_check_interval)
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s CONNINFO N\n", argv[0]);
        return 2;
    }
    const int n = std::atoi(argv[2]);
    std::vector<PGconn *> conns;
    conns.reserve(n);
    for (int i = 0; i < n; i++) {
        PGconn *c = PQconnectdb(argv[1]);
        if (PQstatus(c) != CONNECTION_OK) {
            std::fprintf(stderr, "connection %d failed: %s", i, PQerrorMessage(c));
            PQfinish(c);
            for (PGconn *o : conns) PQfinish(o);
            return 1;
        }
        conns.push_back(c);
    }
    std::printf("ready %d\n", n);
    std::fflush(stdout);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.rfind("busy ", 0) == 0) {
            const std::string sql = "SELECT pg_sleep(" + std::to_string(std::atof(line.c_str() + 5)) + ")";
            int failed = 0;
            for (PGconn *c : conns)
                if (!PQsendQuery(c, sql.c_str())) failed++;
            std::printf("busy %d\n", n - failed);
            std::fflush(stdout);
        } else if (line == "quit") {
            break;
        }
    }
    for (PGconn *c : conns) PQfinish(c);
    return 0;
}
