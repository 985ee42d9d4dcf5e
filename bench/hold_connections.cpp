// Opens N idle connections and holds them until stdin closes (benchmark
// helper: 1000 psql processes would cost more than the server under test).
//   hold_connections N "conninfo"   prints "ready N" once all are open
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s N conninfo\n", argv[0]);
        return 2;
    }
    int n = std::atoi(argv[1]);
    std::vector<PGconn *> conns;
    for (int i = 0; i < n; i++) {
        PGconn *c = PQconnectdb(argv[2]);
        if (PQstatus(c) != CONNECTION_OK) {
            std::fprintf(stderr, "connection %d failed: %s", i, PQerrorMessage(c));
            return 1;
        }
        conns.push_back(c);
    }
    std::printf("ready %d\n", n);
    std::fflush(stdout);
    while (std::getchar() != EOF) {
    }
    for (PGconn *c : conns) PQfinish(c);
    return 0;
}
