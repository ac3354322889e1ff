package mediamicroservices

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/orchbench/orchbench/deathstarbench/internal/rpc"
	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// builtService is what buildService makes: a Thrift processor, or for the
// front end an HTTP handler.
type builtService struct {
	processor thrift.TProcessor
	http      http.Handler
}

// buildService wires service name to its stores and upstreams, collecting
// every missing setting into one error.
func buildService(ctx context.Context, name string, settings Settings, storage *storageSet, up *upstreamSet) (builtService, error) {
	var errs []error
	client := func(service string) *rpc.Client {
		c, err := up.client(service)
		if err != nil {
			errs = append(errs, err)
			return rpc.NewClient("", rpc.DefaultOptions())
		}
		return c
	}
	collection := func() store.Collection {
		c, err := storage.collection(ctx, name)
		errs = append(errs, err)
		return c
	}
	memcached := func() store.Rendezvous {
		c, err := storage.memcached(name)
		errs = append(errs, err)
		return c
	}
	timelines := func() store.Timelines {
		t, err := storage.timelines(name)
		errs = append(errs, err)
		return t
	}
	composeReview := func() mm.ComposeReviewService {
		return mm.NewComposeReviewServiceClient(client(ServiceComposeReview))
	}
	reviewStorage := func() mm.ReviewStorageService {
		return mm.NewReviewStorageServiceClient(client(ServiceReviewStorage))
	}

	var built builtService
	switch name {
	case ServiceFrontend:
		built.http = (&Frontend{
			User:        mm.NewUserServiceClient(client(ServiceUser)),
			MovieID:     mm.NewMovieIdServiceClient(client(ServiceMovieID)),
			Text:        mm.NewTextServiceClient(client(ServiceText)),
			UniqueID:    mm.NewUniqueIdServiceClient(client(ServiceUniqueID)),
			CastInfo:    mm.NewCastInfoServiceClient(client(ServiceCastInfo)),
			Plot:        mm.NewPlotServiceClient(client(ServicePlot)),
			MovieInfo:   mm.NewMovieInfoServiceClient(client(ServiceMovieInfo)),
			Page:        mm.NewPageServiceClient(client(ServicePage)),
			UserReview:  mm.NewUserReviewServiceClient(client(ServiceUserReview)),
			Rating:      mm.NewRatingServiceClient(client(ServiceRating)),
			CallTimeout: settings.RPCCallTimeout,
			Logger:      settings.Logger,
		}).Handler()
	case ServiceUniqueID:
		built.processor = mm.NewUniqueIdServiceProcessor(&UniqueIDService{IDs: uniqueid.New(settings.MachineID), ComposeReview: composeReview()})
	case ServiceText:
		built.processor = mm.NewTextServiceProcessor(&TextService{ComposeReview: composeReview()})
	case ServiceUser:
		built.processor = mm.NewUserServiceProcessor(&UserService{
			Users:         records[userRecord]{docs: collection(), cache: memcached(), prefix: "user:"},
			IDs:           uniqueid.New(settings.MachineID),
			ComposeReview: composeReview(),
		})
	case ServiceMovieID:
		built.processor = mm.NewMovieIdServiceProcessor(&MovieIDService{
			Movies:        records[string]{docs: collection(), cache: memcached(), prefix: "movie-id:"},
			ComposeReview: composeReview(),
			Rating:        mm.NewRatingServiceClient(client(ServiceRating)),
		})
	case ServiceRating:
		tallies, err := storage.tallies(name)
		errs = append(errs, err)
		built.processor = mm.NewRatingServiceProcessor(&RatingService{Tallies: tallies, ComposeReview: composeReview()})
	case ServiceComposeReview:
		built.processor = mm.NewComposeReviewServiceProcessor(&ComposeReviewService{
			Parts:         memcached(),
			ReviewStorage: reviewStorage(),
			UserReview:    mm.NewUserReviewServiceClient(client(ServiceUserReview)),
			MovieReview:   mm.NewMovieReviewServiceClient(client(ServiceMovieReview)),
		})
	case ServiceReviewStorage:
		built.processor = mm.NewReviewStorageServiceProcessor(&ReviewStorageService{
			Reviews: records[mm.Review]{docs: collection(), cache: memcached(), prefix: "review:"},
		})
	case ServiceUserReview:
		built.processor = mm.NewUserReviewServiceProcessor(NewUserReviewService(collection(), timelines(), reviewStorage()))
	case ServiceMovieReview:
		built.processor = mm.NewMovieReviewServiceProcessor(NewMovieReviewService(collection(), timelines(), reviewStorage()))
	case ServiceCastInfo:
		built.processor = mm.NewCastInfoServiceProcessor(&CastInfoService{
			Casts: records[mm.CastInfo]{docs: collection(), cache: memcached(), prefix: "cast-info:"},
		})
	case ServicePlot:
		built.processor = mm.NewPlotServiceProcessor(&PlotService{
			Plots: records[string]{docs: collection(), cache: memcached(), prefix: "plot:"},
		})
	case ServiceMovieInfo:
		built.processor = mm.NewMovieInfoServiceProcessor(&MovieInfoService{
			Movies: records[mm.MovieInfo]{docs: collection(), cache: memcached(), prefix: "movie-info:"},
		})
	case ServicePage:
		built.processor = mm.NewPageServiceProcessor(&PageService{
			MovieInfo:   mm.NewMovieInfoServiceClient(client(ServiceMovieInfo)),
			CastInfo:    mm.NewCastInfoServiceClient(client(ServiceCastInfo)),
			Plot:        mm.NewPlotServiceClient(client(ServicePlot)),
			MovieReview: mm.NewMovieReviewServiceClient(client(ServiceMovieReview)),
		})
	default:
		return built, fmt.Errorf("unknown service %q (want one of %s, or all)", name, strings.Join(ServiceNames(), ", "))
	}
	return built, errors.Join(errs...)
}
