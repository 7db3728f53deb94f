# Reference values for the Davidson tie model: BradleyTerry2's GenDavidson family fitted with gnm
# on the 2008-09 Premier League season of BradleyTerry2's `football` data (its documented
# example, here without the home advantage, so that the model is the plain Davidson model).
#
# Run from the repository root:  Rscript tests/data/ties_reference.R
# Writes tests/data/ties_reference_strengths.csv (team, strength, se: the log-strength with the
# first team alphabetically at 0 and its model-based standard error) and
# tests/data/ties_reference_tie.csv (parameter, estimate, se: GenDavidson's tie.max, the logit of
# the largest tie probability nu / (2 + nu), and log(nu) = tie.max + log(2)), plus the
# log-likelihood of the trinomial model.
suppressPackageStartupMessages({
  library(BradleyTerry2)
  library(gnm)
})
games <- read.csv("tests/data/football_epl_2008_2013.csv", stringsAsFactors = FALSE)
games <- games[games$season == "2008-9", ]
teams <- sort(unique(c(games$home, games$away)))
games$home <- factor(games$home, levels = teams)
games$away <- factor(games$away, levels = teams)
games$match <- seq_len(nrow(games))
games$result <- factor(games$result, levels = c(-1, 0, 1))
tri <- expandCategorical(games, "result", idvar = "match")
set.seed(1)
fit <- gnm(count ~ GenDavidson(result == 1, result == 0, result == -1, home, away,
                               tie.max = ~1) - 1,
           eliminate = match, family = poisson, data = tri,
           constrain = "Ars",
           constrainTo = 0, tolerance = 1e-12, iterMax = 500)
cf <- coef(fit)
se <- sqrt(diag(vcov(fit)))
ability <- match(teams, names(cf))
tie <- match("tie.max", names(cf))
strength <- data.frame(team = teams, strength = unname(cf[ability]),
                       se = unname(ifelse(is.na(se[ability]), 0, se[ability])))
strength$strength[1] <- 0
strength$se[1] <- 0
write.csv(strength, "tests/data/ties_reference_strengths.csv", row.names = FALSE)
# the log-likelihood of the trinomial outcomes: the Poisson fit's, plus the sum over matches of
# log(1) (one count per match, the match totals eliminated)
p <- fitted(fit)
loglik <- sum(tri$count * log(p))
tie.max <- unname(cf[tie])
tie.se <- unname(se[tie])
out <- data.frame(parameter = c("tie.max", "log_nu", "loglik"),
                  estimate = c(tie.max, tie.max + log(2), loglik),
                  se = c(tie.se, tie.se, NA))
write.csv(out, "tests/data/ties_reference_tie.csv", row.names = FALSE)
